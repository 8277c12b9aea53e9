import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, serveNodeHttp } from '../../adapters/node-http/index.js';
import { createLauncher } from '../../src/launcher/launcher.js';
import type { Engine } from '../../src/engine/types.js';
import type { Run } from '../../src/run/types.js';
import { waitUntil } from '../helpers/wait.js';
import { fixtureEngine, fixtureFlows, holdConnection, rawExchange, TRANSPORTS, type RawAnswer, type Started, type Transport } from './transport-fixtures.js';
import { rawRequest as raw } from '../e2e/rest-helpers.js';

// The REST launcher facing an attacker (issue 12, defects 3, 4, 6 and 8; docs/rest.md "Statuses and
// error codes", "Limits"), over every transport adapter, with raw sockets where fetch cannot say it.

const TOKEN = 'hostile-token-0123456789';

function pathOf(started: Started): string {
  return new URL(started.base).pathname.replace(/\/$/, '');
}

/** The answer's body is structured JSON of the `{error, message}` style: returns it. */
function structured(answer: RawAnswer | { status: number; body: string }): { error: string; message: string; [k: string]: unknown } {
  let parsed: any;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    throw new Error(`not a JSON body (status ${answer.status}): ${JSON.stringify(answer.body.slice(0, 200))}`);
  }
  expect(parsed).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  return parsed;
}

async function fetchAnswer(url: string, init: RequestInit = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.text() };
}

describe.each(TRANSPORTS)('REST launcher over $name, facing an attacker', (transport: Transport) => {
  let engine: Engine;
  let open: Started;
  let guarded: Started;
  let idle: Started;
  let host: string;

  beforeAll(async () => {
    engine = fixtureEngine();
    const flows = fixtureFlows();
    open = await transport.start(createLauncher({ engine, flows }));
    guarded = await transport.start(createLauncher({ engine, flows, token: TOKEN }));
    idle = await transport.start(createLauncher({ engine, flows }), { idleTimeoutMs: 400 });
    host = `127.0.0.1:${open.port}`;
  });

  afterAll(async () => {
    await Promise.all([open?.close(), guarded?.close(), idle?.close()]);
    await engine?.dispose();
  });

  const runCount = async () => (await engine.listRuns()).length;

  it('closes a connection whose request body stops arriving, after the idle timeout, with a structured 408 (defect 3)', async () => {
    const before = await runCount();
    const stalled = raw(
      'POST',
      `${pathOf(idle)}/flows/fails/runs`,
      { host: `127.0.0.1:${idle.port}`, 'content-type': 'application/json', 'content-length': '10', connection: 'keep-alive' },
      '{"',
    );
    // 20 stalled requests at once; each waits for the server to close it (the bound only ends a
    // hang: Node's own requestTimeout would close them after about 300 s).
    let answers = await Promise.all(Array.from({ length: 20 }, () => rawExchange(idle.port, stalled, { boundMs: 60_000, holdOpen: true })));
    expect(answers.map((a) => a.closedByServer)).toEqual(answers.map(() => true));
    // The server's idle clock starts at the accept, so on a loaded machine a connection can be closed
    // as idle before its request is read (nothing received): right, but then there is no 408 to
    // check. A server that read the request answers 408; retry (bounded) until one did.
    for (let attempt = 0; attempt < 5 && !answers.some((a) => a.status !== undefined); attempt++) {
      answers = await Promise.all(Array.from({ length: 5 }, () => rawExchange(idle.port, stalled, { boundMs: 60_000, holdOpen: true })));
      expect(answers.every((a) => a.closedByServer)).toBe(true);
    }
    const answered = answers.filter((a) => a.status !== undefined);
    expect(answered.length).toBeGreaterThan(0);
    for (const a of answered) {
      expect(a.status).toBe(408);
      expect(a.headers.connection).toBe('close');
      expect(structured(a).error).toBe('request_timeout');
    }
    expect(await runCount()).toBe(before);
    // The connection cap holds all along: the idle server still answers.
    expect((await fetch(`${idle.base}/flows`)).status).toBe(200);
  });

  it('caps open connections: past the cap a connection is closed unanswered, and freed slots are reused (defect 3)', async () => {
    const capped = await transport.start(createLauncher({ engine, flows: fixtureFlows() }), { maxConnections: 3 });
    const sockets: { close(): void }[] = [];
    try {
      const keepAlive = raw('GET', `${pathOf(capped)}/flows`, { host: `127.0.0.1:${capped.port}`, connection: 'keep-alive' });
      // Three keep-alive connections, each answered (so each is accepted and counted), then held open.
      for (let i = 0; i < 3; i++) {
        const { answer, close } = await holdConnection(capped.port, keepAlive);
        expect(answer.status).toBe(200);
        sockets.push({ close });
      }
      const refused = await rawExchange(capped.port, keepAlive, { boundMs: 60_000 });
      expect(refused.closedByServer).toBe(true);
      expect(refused.status).toBeUndefined();
      for (const s of sockets) s.close();
      // Slots free up once the server has seen the closes (awaited, capped against a hang).
      const res = await waitUntil(
        async () => {
          const a = await rawExchange(capped.port, raw('GET', `${pathOf(capped)}/flows`, { host: `127.0.0.1:${capped.port}` }));
          return a.status === 200 && a;
        },
        { what: 'a connection to be accepted after the held ones closed' },
      );
      expect(res.status).toBe(200);
    } finally {
      for (const s of sockets) s.close();
      await capped.close();
    }
  });

  it('refuses a cross-site form post and DNS rebinding without a token: foreign Host 403, foreign Origin 403, text/plain 415; nothing runs (defect 4)', async () => {
    const before = await runCount();
    const base = pathOf(open);
    // The attack of the issue: a form post from attacker.example after rebinding its name to 127.0.0.1.
    const formPost = await rawExchange(
      open.port,
      raw('POST', `${base}/flows/fails/runs`, { host: 'attacker.example', origin: 'https://attacker.example', 'content-type': 'text/plain' }, '{"x":1}'),
    );
    expect(formPost.status).toBe(403);
    expect(structured(formPost).error).toBe('host_not_allowed');
    // Each defence alone.
    const foreignOrigin = await rawExchange(
      open.port,
      raw('POST', `${base}/flows/fails/runs`, { host, origin: 'https://attacker.example', 'content-type': 'application/json' }, '{}'),
    );
    expect(foreignOrigin.status).toBe(403);
    expect(structured(foreignOrigin).error).toBe('origin_not_allowed');
    const nullOrigin = await rawExchange(
      open.port,
      raw('POST', `${base}/flows/fails/runs`, { host, origin: 'null', 'content-type': 'application/json' }, '{}'),
    );
    expect(nullOrigin.status).toBe(403);
    expect(structured(nullOrigin).error).toBe('origin_not_allowed');
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json; charset=latin1',
    ]) {
      const a = await rawExchange(open.port, raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': type }, '{}'));
      expect({ type, status: a.status }).toEqual({ type, status: 415 });
      expect(structured(a).error).toBe('unsupported_media_type');
    }
    // A body without any Content-Type (a no-cors fetch of a Blob) is refused too.
    const untyped = await rawExchange(open.port, raw('POST', `${base}/flows/fails/runs`, { host }, '{}'));
    expect(untyped.status).toBe(415);
    expect(structured(untyped).error).toBe('unsupported_media_type');
    // An empty text/plain form post (no fields) would run with defaults: refused as well.
    const emptyForm = await rawExchange(open.port, raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'text/plain', 'content-length': '0' }));
    expect(emptyForm.status).toBe(415);
    expect(await runCount()).toBe(before);

    // What stays allowed: loopback Hosts with any port, a loopback Origin, JSON with a UTF-8 charset,
    // an empty body without a type.
    for (const [h, origin] of [
      ['localhost', undefined],
      [`LOCALHOST:${open.port}`, `http://localhost:5173`],
      [`[::1]:${open.port}`, undefined],
      [`127.0.0.2`, `http://127.0.0.1:${open.port}`],
    ] as const) {
      const a = await rawExchange(
        open.port,
        raw('POST', `${base}/flows/fails/runs`, { host: h, ...(origin ? { origin } : {}), 'content-type': 'application/json; charset=UTF-8' }, '{}'),
      );
      expect({ h, status: a.status }).toEqual({ h, status: 200 });
    }
    const noBody = await rawExchange(open.port, raw('POST', `${base}/flows/fails/runs`, { host, 'content-length': '0' }));
    expect(noBody.status).toBe(200);
    expect(await runCount()).toBe(before + 5);
  });

  it('answers GET /runs/{id} and every other route only for a loopback Host without a token; a token guards any Host (defect 4)', async () => {
    const run: Run = JSON.parse((await fetchAnswer(`${open.base}/flows/fails/runs`, { method: 'POST' })).body);
    const base = pathOf(open);
    for (const target of [`${base}/runs/${run.id}`, `${base}/flows`, `${base}/openapi.json`, `${base}/nope`]) {
      for (const h of ['attacker.example', `attacker.example:${open.port}`, '127.0.0.1.nip.io', 'localhost.attacker.example', '192.0.2.1']) {
        const a = await rawExchange(open.port, raw('GET', target, { host: h }));
        expect({ target, h, status: a.status }).toEqual({ target, h, status: 403 });
        expect(structured(a).error).toBe('host_not_allowed');
        expect(a.body).not.toContain(run.id);
      }
    }
    const mine = await rawExchange(open.port, raw('GET', `${base}/runs/${run.id}`, { host: `localhost:${open.port}` }));
    expect(mine.status).toBe(200);
    expect(JSON.parse(mine.body).id).toBe(run.id);
    // With a token, the token is the guard: a proxied or remote Host is fine once authenticated.
    const g = pathOf(guarded);
    const remote = await rawExchange(guarded.port, raw('GET', `${g}/runs/${run.id}`, { host: 'flows.example.com', authorization: `Bearer ${TOKEN}` }));
    expect(remote.status).toBe(200);
    const anonymous = await rawExchange(guarded.port, raw('GET', `${g}/runs/${run.id}`, { host: 'flows.example.com' }));
    expect(anonymous.status).toBe(401);
    // ... but a body still has to be JSON.
    const typed = await rawExchange(
      guarded.port,
      raw('POST', `${g}/flows/fails/runs`, { host: 'flows.example.com', authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, '{}'),
    );
    expect(typed.status).toBe(415);
  });

  it('lists the refusals in the OpenAPI document: 403 and 415 on the POST routes, 403 on the others', async () => {
    const doc = JSON.parse((await fetchAnswer(`${open.base}/openapi.json`)).body);
    for (const path of ['/flows/greet/runs', '/runs/{id}/replay']) {
      expect(Object.keys(doc.paths[path].post.responses)).toEqual(expect.arrayContaining(['403', '415']));
    }
    expect(doc.paths['/runs/{id}/replay'].post.responses['403'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    expect(doc.paths['/runs/{id}/replay'].post.responses['415'].content['application/json'].schema.$ref).toBe('#/components/schemas/ReplayError');
    for (const path of ['/flows', '/runs/{id}', '/openapi.json']) expect(Object.keys(doc.paths[path].get.responses)).toContain('403');
  });

  it('answers a body of null (or any non-object JSON) as documented: 422 on the runs route, 400 {code} on replay; nothing runs (defect 6)', async () => {
    const original: Run = JSON.parse((await fetchAnswer(`${open.base}/flows/fails/runs`, { method: 'POST' })).body);
    const before = await runCount();
    for (const body of ['null', ' null ', 'false', '0', '"x"', '[]']) {
      const r = await fetchAnswer(`${open.base}/flows/fails/runs`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
      const parsed = structured(r);
      expect(parsed.error).toBe('invalid_inputs');
      expect(parsed.issues).toEqual([{ path: '', message: 'the body must be a JSON object' }]);
      const replay = await fetchAnswer(`${open.base}/runs/${original.id}/replay`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect({ body, status: replay.status }).toEqual({ body, status: 400 });
      expect(JSON.parse(replay.body)).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('must be a JSON object') });
    }
    expect(await runCount()).toBe(before);
  });

  it('refuses content and transfer codings it does not decode with 415 unsupported_encoding (defect 8)', async () => {
    const before = await runCount();
    const base = pathOf(open);
    const json = '{}';
    const chunked = `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`;
    const gz = gzipSync(json).toString('latin1');
    const cases: [string, Record<string, string>, string][] = [
      ['gzip, chunked', { 'transfer-encoding': 'gzip, chunked' }, chunked],
      ['deflate, chunked', { 'transfer-encoding': 'deflate, chunked' }, chunked],
      ['Content-Encoding: gzip', { 'content-encoding': 'gzip' }, gz],
      ['Content-Encoding: br', { 'content-encoding': 'br' }, json],
      ['Content-Encoding: gzip, identity', { 'content-encoding': 'gzip, identity' }, gz],
    ];
    for (const [label, headers, body] of cases) {
      const a = await rawExchange(open.port, raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'application/json', ...headers }, body));
      expect({ label, status: a.status }).toEqual({ label, status: 415 });
      expect(structured(a).error).toBe('unsupported_encoding');
      const replay = await rawExchange(
        open.port,
        raw('POST', `${base}/runs/00000000-0000-4000-8000-000000000000/replay`, { host, 'content-type': 'application/json', ...headers }, body),
      );
      expect({ label, status: replay.status }).toEqual({ label, status: 415 });
      expect(JSON.parse(replay.body).code).toBe('unsupported_encoding');
    }
    expect(await runCount()).toBe(before);
    // What is decoded stays accepted: plain chunked, and the identity content coding.
    const plain = await rawExchange(
      open.port,
      raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunked),
    );
    expect(plain.status).toBe(200);
    const identity = await rawExchange(
      open.port,
      raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'application/json', 'content-encoding': 'identity' }, json),
    );
    expect(identity.status).toBe(200);
  });

  it('answers a backslash, a raw non-ASCII byte, a bad method or oversized headers with a structured body (defect 8)', async () => {
    const base = pathOf(open);
    const cases: [string, string][] = [
      ['backslash', raw('GET', `${base}/flows\\..\\runs`, { host })],
      ['backslash in runs path', raw('POST', `${base}/flows/fails\\runs`, { host, 'content-type': 'application/json' }, '{}')],
      ['raw byte', raw('GET', `${base}/runs/\xff\xfe`, { host })],
      ['raw UTF-8', raw('GET', `${base}/flows/\xc3\xa9t\xc3\xa9/runs`, { host })],
      ['bad method', raw('G<T', `${base}/flows`, { host })],
      ['no Host', `GET ${base}/flows HTTP/1.1\r\nConnection: close\r\n\r\n`],
      ['bad Host', raw('GET', `${base}/flows`, { host: '127.0.0.1:80@attacker.example' })],
      ['huge header', raw('GET', `${base}/flows`, { host, 'x-big': 'a'.repeat(80 * 1024) })],
      [
        'bad chunk',
        raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, 'zz\r\n{}\r\n0\r\n\r\n'),
      ],
      ['gzip transfer coding only', raw('POST', `${base}/flows/fails/runs`, { host, 'content-type': 'application/json', 'transfer-encoding': 'gzip' }, '{}')],
    ];
    for (const [label, payload] of cases) {
      const a = await rawExchange(open.port, payload);
      expect({ label, answered: a.status !== undefined }).toEqual({ label, answered: true });
      expect({ label, status: a.status! >= 400 && a.status! < 500 }).toEqual({ label, status: true });
      expect({ label, type: a.headers['content-type'] }).toEqual({ label, type: expect.stringMatching(/^application\/json/) });
      structured(a);
    }
  });
});

describe('node-http adapter defaults', () => {
  it('closes idle connections after 30 s and caps connections at 256 unless told otherwise', async () => {
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(30_000);
    expect(DEFAULT_MAX_CONNECTIONS).toBe(256);
    const s = await serveNodeHttp({ fetch: () => new Response('{}') });
    try {
      expect(s.idleTimeoutMs).toBe(30_000);
      expect(s.maxConnections).toBe(256);
      expect(s.server.keepAliveTimeout).toBe(30_000);
      expect(s.server.maxConnections).toBe(256);
    } finally {
      await s.close();
    }
    const custom = await serveNodeHttp({ fetch: () => new Response('{}') }, { idleTimeoutMs: 1234, maxConnections: 7 });
    try {
      expect([custom.idleTimeoutMs, custom.server.keepAliveTimeout, custom.maxConnections, custom.server.maxConnections]).toEqual([1234, 1234, 7, 7]);
    } finally {
      await custom.close();
    }
  });
});
