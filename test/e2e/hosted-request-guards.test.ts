import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonDeeperThan } from '../../src/http/body.js';
import type { Logger } from '../../src/ports/clock.js';
import { MAX_BODY_DEPTH } from '../../src/service/request-guards.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';

/**
 * Regressions of what the hosted fuzz (hosted-fuzz.test.ts) found, each once a 500: a body nested
 * thousands of levels deep (Hono's validator serialized the parsed body again and overflowed the
 * stack), a body with no Content-Type or Content-Length handed over in process (zod-openapi's 415 was
 * no structured error), a NUL character in a path, query or body string (Postgres refuses it), an
 * MCP body `null`, and an MCP handler's storage failure whose text reached the client.
 */

let h: HostedFixture;
let c: Client;
let key: string;
const errors: string[] = [];
const logger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: (m) => errors.push(m) };

beforeAll(async () => {
  h = await startHosted(
    {},
    // The logger is injected: the test reads what the service logs (the outage warnings).
    { logger },
  );
  c = new Client(h.url);
  const { user, org } = await c.signup('guards@example.test');
  await publishPureAutomation(h.storage, h.engine, org.id, user.id, 'greet');
  key = (await c.call('POST', '/api/keys', { mode: 'live' })).body.secret;
});
afterAll(async () => {
  await h?.close();
});

const inProcess = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
  // Bytes: a string body would get `Content-Type: text/plain` from the Request constructor.
  const res = await h.service.fetch(
    new Request(h.url + path, { method, headers: init.headers ?? {}, ...(init.body !== undefined ? { body: new TextEncoder().encode(init.body) } : {}) }),
  );
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
};
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('request guards', () => {
  it('jsonDeeperThan counts brackets outside strings only', () => {
    expect(jsonDeeperThan(nested(3), 3)).toBe(false);
    expect(jsonDeeperThan(nested(4), 3)).toBe(true);
    expect(jsonDeeperThan(`{"a":"${'['.repeat(100)}\\"[["}`, 1)).toBe(false);
    expect(jsonDeeperThan('[[[', 2)).toBe(true);
  });

  it(`a body nested deeper than ${MAX_BODY_DEPTH} levels is 400 invalid_json, on every JSON route; at the limit it reaches validation`, async () => {
    for (const levels of [MAX_BODY_DEPTH - 1, MAX_BODY_DEPTH, 5_000, 100_000]) {
      const deep = `{"email":"x@y.test","password":"correct horse battery","x":${nested(levels)}}`;
      const r = await c.call('POST', '/api/auth/signup', deep);
      if (levels + 1 > MAX_BODY_DEPTH) expect([levels, r.status, r.body.error]).toEqual([levels, 400, 'invalid_json']);
      else expect([levels, r.status]).toEqual([levels, 201]);
    }
    const gateway = await fetch(`${h.url}/v1/run/greet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: `{"inputs":{"who":${nested(10_000)}}}`,
    });
    expect([gateway.status, (await gateway.json()).error]).toEqual([400, 'invalid_json']);
    const automation = await c.call('POST', '/api/automations', `{"name":"deep","site":"https://x.test","task":${nested(10_000)}}`);
    expect([automation.status, automation.body.message]).toEqual([400, `the body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`]);
  });

  it('in process, a body without Content-Type or Content-Length is 415, so is a JSON type zod-openapi refuses; no body at all is still fine', async () => {
    const r = await inProcess('POST', '/api/automations', { headers: { cookie: `svc_session=${c.cookie}` }, body: '{"name":"x","site":"https://x.test"}' });
    expect([r.status, r.body]).toEqual([415, { error: 'unsupported_media_type', message: 'send the body as application/json' }]);
    // A JSON type the body guard lets through but zod-openapi refuses itself (its HTTPException): the
    // same structured 415, not a 500.
    for (const type of ['application/json;', 'application/x_y+json']) {
      const odd = await inProcess('POST', '/api/automations', {
        headers: { cookie: `svc_session=${c.cookie}`, 'content-type': type },
        body: '{"name":"x","site":"https://x.test"}',
      });
      expect([type, odd.status, odd.body.error, typeof odd.body.message]).toEqual([type, 415, 'unsupported_media_type', 'string']);
    }
    const empty = await inProcess('GET', '/api/automations', { headers: { cookie: `svc_session=${c.cookie}` } });
    expect(empty.status).toBe(200);
  });

  it('a NUL character in a path, query, key or body string is 422 nul_character (Postgres stores none)', async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['GET', '/api/automations/%00', undefined, ['path']],
      ['GET', '/api/flowspecs/a%00b', undefined, ['path']],
      ['GET', '/api/executions?flow=%00', undefined, ['query', 'flow']],
      ['POST', '/api/automations', { name: 'nul', site: 'https://x.test', task: 'a\u0000b' }, ['task']],
      ['POST', '/api/orgs', { name: '\u0000' }, ['name']],
      ['PUT', '/api/secrets/x', { value: 'v\u0000' }, ['value']],
    ];
    for (const [method, path, body, at] of cases) {
      const r = await c.call(method, path, body);
      expect([path, r.status, r.body.error, r.body.issues?.[0]]).toEqual([
        path,
        422,
        'invalid_request',
        { path: at, message: 'must not contain the NUL character (U+0000)', code: 'nul_character' },
      ]);
    }
    const run = await fetch(`${h.url}/v1/run/greet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { who: 'a\u0000' } }),
    });
    expect([run.status, (await run.json()).issues[0].path]).toEqual([422, ['inputs', 'who']]);
    const name = await fetch(`${h.url}/v1/run/gr%00eet`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(name.status).toBe(422);
  });

  it('MCP: a body of null, a NUL in a message or a deep message are JSON-RPC errors; a storage failure is "internal error" without its text', async () => {
    const post = async (body: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
      return { status: res.status, body: await res.json() };
    };
    const nul = await post('null', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(nul.status).toBeLessThan(500);
    expect(nul.body.jsonrpc).toBe('2.0');
    const withNul = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'gr\u0000eet', arguments: {} } }));
    expect([withNul.status, withNul.body.id, withNul.body.error.code]).toEqual([400, 7, -32602]);
    const deep = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nested(1_000)}}`);
    expect([deep.status, deep.body.error.code]).toEqual([400, -32600]);

    const original = h.storage.automations.getByName;
    h.storage.automations.getByName = async () => {
      throw new Error('storage detail that must not reach a client');
    };
    try {
      const call = await post(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'greet', arguments: {} } }));
      expect(call.body.error.code).toBe(-32603);
      expect(call.body.error.message).toMatch(/internal error$/);
      expect(JSON.stringify(call.body)).not.toContain('storage detail');
      expect(errors.some((e) => e.includes('storage detail that must not reach a client'))).toBe(true);
    } finally {
      h.storage.automations.getByName = original;
    }
  });
});
