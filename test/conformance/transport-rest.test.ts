import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLauncher } from '../../src/launcher/launcher.js';
import type { Engine } from '../../src/engine/types.js';
import { checkJournalChain } from '../../src/run/journal.js';
import { RunSchema } from '../../src/run/run-schema.js';
import type { Run } from '../../src/run/types.js';
import { waitUntil } from '../helpers/wait.js';
import { fixtureEngine, fixtureFlows, TRANSPORTS, watchConnection, type Started, type Transport } from './transport-fixtures.js';

// One behaviour suite for the REST launcher, run over every transport adapter (spec/engine.md,
// "REST launcher", "Authentication", "Limits"; docs/rest.md).

const TOKEN = 'test-token-0123456789';
const MIB = 1024 * 1024;

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

function post(url: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

describe.each(TRANSPORTS)('REST launcher over $name', (transport: Transport) => {
  let engine: Engine;
  let open: Started;
  let guarded: Started;
  let idle: Started;

  beforeAll(async () => {
    engine = fixtureEngine();
    const flows = fixtureFlows();
    open = await transport.start(createLauncher({ engine, flows }));
    guarded = await transport.start(createLauncher({ engine, flows, token: TOKEN }));
    idle = await transport.start(createLauncher({ engine, flows }), { idleTimeoutMs: 300 });
  });

  afterAll(async () => {
    await Promise.all([open?.close(), guarded?.close(), idle?.close()]);
    await engine?.dispose();
  });

  it('runs a flow synchronously and answers the finished, strict Run', async () => {
    const res = await post(`${open.base}/flows/greet/runs`, JSON.stringify({ who: 'Ada', times: 2 }));
    expect(res.status).toBe(200);
    const run: Run = await json(res);
    expect(() => RunSchema.parse(run)).not.toThrow();
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ greeting: 'Hello, Ada!', times: 2 });
    expect(run.journal.map((e) => e.event)).toContain('run_finished');
    const discovery = await json(await fetch(`${open.base}/flows`));
    expect(run.flow_digest).toBe(discovery.flows.find((f: { name: string }) => f.name === 'greet').digest);
    // The engine recorded the same run: the response is not a copy of something else.
    expect((await engine.getRun(run.id))?.output).toEqual(run.output);
    // The sync answer (serialised from the texts the engine stored while sealing) is the Run that
    // GET /runs/{id} reads back from storage, entry for entry, and every entry checks out.
    const polled = await json(await fetch(`${open.base}/runs/${run.id}`));
    expect(polled).toEqual(run);
    expect(() => checkJournalChain(run.journal)).not.toThrow();
  });

  it('answers a failed run as a 200 Run with status failed', async () => {
    const res = await post(`${open.base}/flows/fails/runs`);
    expect(res.status).toBe(200);
    const run: Run = await json(res);
    expect(run.status).toBe('failed');
    expect(run.output).toBeUndefined();
  });

  it('starts a run with ?mode=async (202) and polls GET /runs/{id} to a terminal state', async () => {
    const res = await post(`${open.base}/flows/greet/runs?mode=async`, JSON.stringify({ who: 'Grace' }));
    expect(res.status).toBe(202);
    const accepted = await json(res);
    expect(Object.keys(accepted).sort()).toEqual(['run_id', 'status']);
    expect(['pending', 'running']).toContain(accepted.status);
    expect(res.headers.get('location')).toBe(`/runs/${accepted.run_id}`);
    // Poll until the run is terminal (capped only against a hang).
    const run: Run = await waitUntil(
      async () => {
        const r = await fetch(`${open.base}/runs/${accepted.run_id}`);
        expect(r.status).toBe(200);
        const polled: Run = await json(r);
        return ['succeeded', 'failed', 'canceled'].includes(polled.status) && polled;
      },
      { what: `run ${accepted.run_id} to finish` },
    );
    expect(run.status).toBe('succeeded');
    expect(run?.output).toEqual({ greeting: 'Hello, Grace!', times: 1 });
    expect(() => RunSchema.parse(run)).not.toThrow();
  });

  it('lists served flows for discovery: name, digest, inputs schema with secrets marked, description', async () => {
    const res = await fetch(`${open.base}/flows`);
    expect(res.status).toBe(200);
    const { flows } = await json(res);
    expect(flows.map((f: { name: string }) => f.name)).toEqual(['fails', 'greet', 'slow']);
    const greet = flows.find((f: { name: string }) => f.name === 'greet');
    expect(greet.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(greet.description).toBe('Greets someone in three pure steps.');
    expect(greet.secret_inputs).toEqual(['api_key']);
    expect(greet.inputs.required).toEqual(['who']);
    expect(greet.inputs.properties.api_key['x-flowctl-secret']).toBe(true);
    expect(greet.inputs.properties.who['x-flowctl-secret']).toBeUndefined();
    expect(greet.runs_path).toBe('/flows/greet/runs');
  });

  it('replays a run with verify (the default) and answers replay errors as {code, message}', async () => {
    const original: Run = await json(await post(`${open.base}/flows/greet/runs`, JSON.stringify({ who: 'Lin' })));
    const res = await post(`${open.base}/runs/${original.id}/replay`, '');
    expect(res.status).toBe(200);
    const replay: Run = await json(res);
    expect(replay.id).not.toBe(original.id);
    expect(replay.status).toBe('succeeded');
    expect(replay.output).toEqual(original.output);
    const started = replay.journal[0]!;
    expect(started.event === 'run_started' && started.replay_of).toEqual({ run_id: original.id, mode: 'verify' });

    const explicit = await post(`${open.base}/runs/${original.id}/replay`, JSON.stringify({ mode: 'verify' }));
    expect(explicit.status).toBe(200);

    const notUuid = await post(`${open.base}/runs/not-a-uuid/replay`, '{}');
    expect(notUuid.status).toBe(400);
    expect(await json(notUuid)).toEqual({ code: 'invalid_run_id', message: expect.any(String) });
    const unknown = await post(`${open.base}/runs/00000000-0000-4000-8000-000000000000/replay`, '{}');
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({ code: 'run_not_found', message: expect.any(String) });
    const badMode = await post(`${open.base}/runs/${original.id}/replay`, JSON.stringify({ mode: 'hermetic' }));
    expect(badMode.status).toBe(400);
    expect((await json(badMode)).code).toBe('invalid_mode');
  });

  it('rejects contract violations with every issue and starts no run; bad JSON 400, unknown flow 404, wrong method 405', async () => {
    const before = (await engine.listRuns()).length;
    const res = await post(`${open.base}/flows/greet/runs`, JSON.stringify({ times: 'many', extra: true, api_key: 'hunter2' }));
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.error).toBe('invalid_inputs');
    const paths = body.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['api_key', 'extra', 'times', 'who']);
    expect(JSON.stringify(body)).not.toContain('hunter2');
    // A secret input takes a reference.
    const withRef = await post(`${open.base}/flows/greet/runs`, JSON.stringify({ who: 'Ada', api_key: 'secret:api_key' }));
    expect(withRef.status).toBe(200);
    expect((await engine.listRuns()).length).toBe(before + 1);

    const notObject = await post(`${open.base}/flows/greet/runs`, '[1,2]');
    expect(notObject.status).toBe(422);
    const badJson = await post(`${open.base}/flows/greet/runs`, '{"who":');
    expect(badJson.status).toBe(400);
    expect((await json(badJson)).error).toBe('invalid_json');
    const badMode = await post(`${open.base}/flows/greet/runs?mode=later`, '{"who":"x"}');
    expect(badMode.status).toBe(400);
    expect((await json(badMode)).error).toBe('invalid_mode');
    const unknownFlow = await post(`${open.base}/flows/nope/runs`, '{}');
    expect(unknownFlow.status).toBe(404);
    expect((await json(unknownFlow)).error).toBe('flow_not_found');
    const unknownRun = await fetch(`${open.base}/runs/00000000-0000-4000-8000-000000000000`);
    expect(unknownRun.status).toBe(404);
    expect((await json(unknownRun)).error).toBe('run_not_found');
    const wrongMethod = await fetch(`${open.base}/flows/greet/runs`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const deleteFlows = await fetch(`${open.base}/flows`, { method: 'DELETE' });
    expect(deleteFlows.status).toBe(405);
    expect(deleteFlows.headers.get('allow')).toBe('GET, HEAD');
    expect((await engine.listRuns()).length).toBe(before + 1);
  });

  it('requires the bearer token when one is set: 401 without or with a wrong one', async () => {
    const none = await fetch(`${guarded.base}/flows`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await json(none)).error).toBe('unauthorized');
    const wrong = await fetch(`${guarded.base}/flows`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const scheme = await fetch(`${guarded.base}/flows`, { headers: { authorization: `Basic ${TOKEN}` } });
    expect(scheme.status).toBe(401);
    const before = (await engine.listRuns()).length;
    const runNoToken = await post(`${guarded.base}/flows/greet/runs`, '{"who":"x"}');
    expect(runNoToken.status).toBe(401);
    expect((await engine.listRuns()).length).toBe(before);
    const ok = await post(`${guarded.base}/flows/greet/runs`, '{"who":"x"}', { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    const doc = await fetch(`${guarded.base}/openapi.json`);
    expect(doc.status).toBe(401);
  });

  it('refuses a body over 1 MiB with 413, by Content-Length and by counting a chunked body', async () => {
    const before = (await engine.listRuns()).length;
    // Exactly 1 MiB of body, most of it JSON whitespace: the body limit counts bytes, while the inputs
    // themselves stay far below the inputs contract's own 1 MiB bound (which also counts defaults).
    const inputs = '{"who":"Ada"}';
    const fits = inputs + ' '.repeat(MIB - inputs.length);
    expect(Buffer.byteLength(fits)).toBe(MIB);
    const atLimit = await post(`${open.base}/flows/greet/runs`, fits);
    expect(atLimit.status).toBe(200);

    const over = await post(`${open.base}/flows/greet/runs`, `${fits} `);
    expect(over.status).toBe(413);
    expect((await json(over)).error).toBe('body_too_large');

    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const chunked = await fetch(`${open.base}/flows/greet/runs`, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await json(chunked)).error).toBe('body_too_large');
    expect((await engine.listRuns()).length).toBe(before + 1);
  });

  it('closes idle connections after the idle timeout, but not during a long sync run', async () => {
    // Never sends a request. (The bounds of watchConnection only end a hang.)
    const silent = await watchConnection(idle.port, undefined, 60_000);
    expect(silent.closedByServer).toBe(true);
    // Keep-alive after a response. The server's idle clock starts when it accepts the connection: if
    // this process stalls longer than the short idle timeout between the accept and the read of the
    // request (possible on a loaded machine), the close is right and there is nothing to check; a
    // server that closes a connection whose request it has read fails every attempt.
    const request = `GET ${new URL(idle.base).pathname.replace(/\/$/, '')}/flows HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`;
    let kept = await watchConnection(idle.port, request, 60_000);
    for (let attempt = 1; attempt < 5 && kept.received === ''; attempt++) kept = await watchConnection(idle.port, request, 60_000);
    expect(kept.received).toMatch(/^HTTP\/1\.1 200/);
    expect(kept.closedByServer).toBe(true);
    // The same short timeout leaves a ~1 s sync run alone.
    const slow = await post(`${idle.base}/flows/slow/runs`, '{}');
    expect(slow.status).toBe(200);
    const run: Run = await json(slow);
    expect(run.status).toBe('succeeded');
    // The default (30 s) keeps a connection open past the bound.
    const defaultIdle = await watchConnection(open.port, undefined, 1_500);
    expect(defaultIdle.closedByServer).toBe(false);
  });

  it('serves an OpenAPI 3.1 document whose request schemas are the ones that validate', async () => {
    const res = await fetch(`${open.base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe('3.1.0');
    const op = doc.paths['/flows/greet/runs'].post;
    const ref: string = op.requestBody.content['application/json'].schema.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!];
    const { flows } = await json(await fetch(`${open.base}/flows`));
    expect(schema).toEqual(flows.find((f: { name: string }) => f.name === 'greet').inputs);
    expect(op.parameters[0]).toMatchObject({ name: 'mode', in: 'query' });
    for (const path of ['/flows', '/runs/{id}', '/runs/{id}/replay', '/openapi.json', '/flows/fails/runs', '/flows/slow/runs']) {
      expect(doc.paths[path]).toBeDefined();
    }
    // The document's schema accepts and rejects exactly what the launcher does.
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const bodies = [
      { who: 'a' },
      { who: 'a', times: 3 },
      {},
      { who: 1 },
      { who: 'a', nope: 1 },
      { who: 'a', api_key: 'plain' },
      { who: 'a', api_key: 'secret:k' },
    ];
    for (const body of bodies) {
      const r = await post(`${open.base}/flows/greet/runs`, JSON.stringify(body));
      await r.body?.cancel();
      expect({ body, status: r.status }).toEqual({ body, status: validate(body) ? 200 : 422 });
    }
    expect(doc.components.schemas.Run.additionalProperties).toBe(false);
  });
});

describe('express adapter behind express.json()', () => {
  it('still gets the body a parser consumed first', async () => {
    const { default: express } = await import('express');
    const { flowctlExpress } = await import('../../adapters/express/index.js');
    const engine = fixtureEngine();
    const app = express();
    app.use(express.json());
    app.use('/api', flowctlExpress(createLauncher({ engine, flows: fixtureFlows() })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
      const res = await post(`${base}/flows/greet/runs`, JSON.stringify({ who: 'Parsed' }));
      expect(res.status).toBe(200);
      expect((await json(res)).output).toEqual({ greeting: 'Hello, Parsed!', times: 1 });
      const bad = await post(`${base}/flows/greet/runs`, JSON.stringify({ who: 7 }));
      expect(bad.status).toBe(422);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await engine.dispose();
    }
  });
});
