import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ProgressNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The hosted MCP endpoint with the official SDK client: tool filtering by publish state, mcp_enabled
 * and key scope; calls in JSON mode and SSE-first mode with progress from the run's journal;
 * structuredContent validated against outputSchema (ajv, JSON Schema 2020-12); the test-key rule;
 * revoked keys; foreign Origins; GET and DELETE 405; an SSE client that disconnects cancels its run, and
 * so does a client at revision 2026-07-28 (the v2 client) that closes its connection.
 */

let h: HostedFixture;
let owner: Client;
const keys: Record<string, string> = {};

// A loopback page that answers only when the test releases it: a browser step waiting on it is a run
// in flight for as long as the test wants.
let slow: HttpServer;
let slowUrl: string;
const held: ServerResponse[] = [];
let onSlowRequest: (() => void) | undefined;
const releaseSlow = () => {
  for (const res of held.splice(0)) res.end('<!doctype html><title>Slow</title><h1>Slow page</h1>');
};

// outputSchema is JSON Schema 2020-12 (MCP 2025-11-25's default dialect).
const ajv = new Ajv2020({ strict: false, allErrors: true });
function expectMatchesOutputSchema(tool: Tool, structured: unknown) {
  expect(tool.outputSchema, `${tool.name} has an outputSchema`).toBeDefined();
  const validate = ajv.compile(tool.outputSchema!);
  expect(validate(structured), JSON.stringify(validate.errors)).toBe(true);
}

async function connect(key: string, sseFirst = false) {
  const client = new McpClient({ name: 'hosted-mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    // The SDK client lists JSON first; an SSE-first client is a fetch that reorders Accept.
    ...(sseFirst
      ? {
          fetch: (input: string | URL | Request, init?: RequestInit) => {
            const headers = new Headers(init?.headers);
            if (headers.has('accept')) headers.set('accept', 'text/event-stream, application/json');
            return fetch(input, { ...init, headers });
          },
        }
      : {}),
  });
  await client.connect(transport);
  return client;
}

async function publish(name: string, ops: unknown[], slots: { input_slots?: string[]; secret_slots?: string[] } = {}) {
  const a = (await owner.call('POST', '/api/automations', { name, site: `${h.url}/example/site`, task: `Task of ${name}` })).body.automation;
  await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, ...slots });
  const r = await owner.call('POST', `/api/authoring/${a.id}/publish`);
  expect(r.status).toBe(200);
  return a.id as string;
}

beforeAll(async () => {
  slow = createServer((req, res) => {
    if (req.url !== '/slow') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    held.push(res);
    onSlowRequest?.();
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('mcp@example.test');
  await owner.call('POST', '/api/automations/example'); // example-forecast: input city, output forecast
  const page = h.exampleSiteUrl;
  await publish('read-title', [
    { kind: 'navigate', url: page },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  const hidden = await publish('hidden-tool', [
    { kind: 'navigate', url: page },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  await owner.call('PATCH', `/api/automations/${hidden}`, { mcp_enabled: false });
  await publish(
    'uses-secret',
    [
      { kind: 'navigate', url: page },
      { kind: 'fill', target: { label: 'City' }, slot: 'home' },
      { kind: 'extract', target: 'h1', name: 'title' },
    ],
    { secret_slots: ['home'] },
  );
  await publish('slow-page', [
    { kind: 'navigate', url: slowUrl },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  await owner.call('POST', '/api/automations', { name: 'never-published', site: page });
  keys.all = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  keys.scoped = (await owner.call('POST', '/api/keys', { mode: 'live', automations: ['read-title', 'hidden-tool', 'never-published'] })).body.secret;
  keys.test = (await owner.call('POST', '/api/keys', { mode: 'test' })).body.secret;
}, 120_000);
afterAll(async () => {
  releaseSlow();
  await h?.close();
  slow?.closeAllConnections();
  await new Promise((resolve) => slow?.close(resolve));
});

describe('hosted MCP endpoint', () => {
  it("lists one tool per published, MCP-enabled automation within the key's scope", async () => {
    // Three keys over the same automations: published ones, one MCP-disabled (hidden-tool), one draft
    // (never-published). The draft and the disabled one are never listed, whatever the key.
    const all = await connect(keys.all!);
    const names = (await all.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['example-forecast', 'read-title', 'slow-page', 'uses-secret']);
    const scoped = await connect(keys.scoped!);
    expect((await scoped.listTools()).tools.map((t) => t.name)).toEqual(['read-title']);
    const testKey = await connect(keys.test!);
    expect((await testKey.listTools()).tools.map((t) => t.name).sort()).toEqual(['example-forecast', 'read-title', 'slow-page', 'uses-secret']);
    await testKey.close();
    const tools = (await all.listTools()).tools;
    const forecast = tools.find((t) => t.name === 'example-forecast')!;
    expect(forecast.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } });
    expect(forecast.outputSchema).toMatchObject({ type: 'object' });
    expect(forecast.annotations?.openWorldHint).toBe(true);
    // Secret inputs never appear in a schema.
    expect(JSON.stringify(tools.find((t) => t.name === 'uses-secret')!.inputSchema)).not.toContain('home');
    // A tool the key does not see is an unknown tool.
    await expect(scoped.callTool({ name: 'example-forecast', arguments: {} })).rejects.toThrow(/unknown tool/);
    await expect(scoped.callTool({ name: 'hidden-tool', arguments: {} })).rejects.toThrow(/unknown tool/);
    await expect(scoped.callTool({ name: 'never-published', arguments: {} })).rejects.toThrow(/unknown tool/);
    await expect(all.callTool({ name: 'never-published', arguments: {} })).rejects.toThrow(/unknown tool/);
    await expect(all.callTool({ name: 'hidden-tool', arguments: {} })).rejects.toThrow(/unknown tool/);
    // The same error as a name that exists nowhere.
    await expect(all.callTool({ name: 'no-such-tool', arguments: {} })).rejects.toThrow(/unknown tool/);
    await all.close();
    await scoped.close();
  });

  it("a JSON-mode tools/list (answered from the serialized list) equals the SDK's SSE-mode answer, for every key; other protocol versions go to the SDK", async () => {
    const raw = async (key: string, accept: string, extra: Record<string, string> = {}) => {
      const res = await fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept, 'mcp-protocol-version': '2025-11-25', ...extra },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      });
      const text = await res.text();
      const json = accept.startsWith('text/event-stream') ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!) : JSON.parse(text);
      return { status: res.status, type: res.headers.get('content-type'), json };
    };
    for (const key of [keys.all!, keys.scoped!, keys.test!]) {
      const fast = await raw(key, 'application/json, text/event-stream');
      const sdk = await raw(key, 'text/event-stream, application/json');
      expect([fast.status, fast.type]).toEqual([200, 'application/json']);
      expect(fast.json).toEqual(sdk.json);
      expect(fast.json).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } });
      // Twice: the second answer comes from the cache and is the same.
      expect((await raw(key, 'application/json, text/event-stream')).json).toEqual(fast.json);
    }
    const old = await raw(keys.all!, 'application/json, text/event-stream', { 'mcp-protocol-version': '1999-01-01' });
    expect(old.status).toBe(400);
    expect(old.json.error.message).toMatch(/Unsupported protocol version/);
  });

  it('a change after a listing shows in the next one (tool rows are cached under a fingerprint of the list)', async () => {
    const client = await connect(keys.all!);
    const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
    const before = await names();
    expect(before).toContain('read-title');
    const readTitle = (await owner.call('GET', '/api/automations')).body.automations.find((a: { name: string }) => a.name === 'read-title');
    expect((await owner.call('PATCH', `/api/automations/${readTitle.id}`, { mcp_enabled: false })).status).toBe(200);
    expect(await names()).toEqual(before.filter((n) => n !== 'read-title'));
    await expect(client.callTool({ name: 'read-title', arguments: {} })).rejects.toThrow(/unknown tool/);
    expect((await owner.call('PATCH', `/api/automations/${readTitle.id}`, { task: 'Read the heading, reworded', mcp_enabled: true })).status).toBe(200);
    const again = (await client.listTools()).tools.find((t) => t.name === 'read-title');
    expect(again?.description).toBe('Read the heading, reworded');
    await client.close();
  });

  it('JSON mode: a call runs the live version and returns structuredContent; bad arguments are an isError result', async () => {
    const client = await connect(keys.all!);
    const r = await client.callTool({ name: 'example-forecast', arguments: { city: 'Quito' } });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { forecast: string }).forecast).toMatch(/^Forecast for Quito: /);
    const tools = (await client.listTools()).tools;
    expectMatchesOutputSchema(tools.find((t) => t.name === 'example-forecast')!, r.structuredContent);
    const bad = await client.callTool({ name: 'example-forecast', arguments: { city: 7 } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content as { text: string }[])[0]!.text).error).toMatchObject({ code: 'invalid_inputs', message: expect.stringContaining('city') });
    const exec = await owner.call('GET', '/api/executions?flow=example-forecast');
    expect(exec.body.executions[0]).toMatchObject({ dispatch: 'mcp', status: 'succeeded', run_id: (r._meta as Record<string, string>)['flowctl/run_id'] });
    await client.close();
  });

  it("SSE-first mode: progress notifications replayed from the run's journal, one per finished step", async () => {
    const client = await connect(keys.all!, true);
    // A client-wide handler sees every notification (a request's onprogress callback is dropped by
    // the SDK client when the result arrives in the same read; docs/mcp.md, "Progress").
    const progress: { progressToken: string | number; progress: number; total?: number; message?: string }[] = [];
    client.setNotificationHandler(ProgressNotificationSchema, (n) => void progress.push(n.params));
    const r = await client.callTool({ name: 'read-title', arguments: {}, _meta: { progressToken: 'p-read-title' } });
    expect((r.structuredContent as { title: string }).title).toBe('Forecast demo');
    expectMatchesOutputSchema((await client.listTools()).tools.find((t) => t.name === 'read-title')!, r.structuredContent);
    const runId = (r._meta as Record<string, string>)['flowctl/run_id'];
    const exec = await owner.call('GET', `/api/executions/${runId}`);
    const journal: { event: string; step?: string; will_retry?: boolean }[] = exec.body.journal;
    // One notification per step the journal shows finished, in order, with the journal's step ids.
    const finished = journal.filter((e) => e.event === 'step_succeeded' || e.event === 'step_skipped' || (e.event === 'step_failed' && !e.will_retry));
    expect(finished.length).toBe(2);
    expect(progress.map((p) => p.progress)).toEqual(finished.map((_, i) => i + 1));
    expect(progress.every((p) => p.progressToken === 'p-read-title' && p.total === 2)).toBe(true);
    progress.forEach((p, i) => expect(p.message).toContain(finished[i]!.step!));
    // JSON mode with the same token: no notifications (they need the SSE response).
    const json = await connect(keys.all!);
    json.setNotificationHandler(ProgressNotificationSchema, (n) => void progress.push(n.params));
    const before = progress.length;
    await json.callTool({ name: 'read-title', arguments: {}, _meta: { progressToken: 'p-json' } });
    expect(progress.length).toBe(before);
    await json.close();
    await client.close();
  });

  it('a test key: 403 with a JSON-RPC error test_key_forbidden on a secret-input tool; other tools run', async () => {
    const res = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.test}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'uses-secret', arguments: {} } }),
    });
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { data: { error: 'test_key_forbidden' } } });
    const client = await connect(keys.test!);
    expect((await client.callTool({ name: 'read-title', arguments: {} })).isError).toBeFalsy();
    await client.close();
  });

  it('keys and methods: no key or a revoked key is 401 invalid_key; GET and DELETE are 405', async () => {
    const minted = (await owner.call('POST', '/api/keys', { mode: 'live' })).body;
    await owner.call('DELETE', `/api/keys/${minted.key.id}`);
    for (const auth of [undefined, `Bearer ${minted.secret}`]) {
      const res = await fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { ...(auth ? { authorization: auth } : {}), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe('invalid_key');
    }
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${h.url}/mcp`, { method, headers: { authorization: `Bearer ${keys.all}` } });
      expect(res.status).toBe(405);
    }
  });

  it('concurrent SSE-first POSTs are each answered with their own stream (stateless: no session id)', async () => {
    const answers = await Promise.all(
      [0, 1, 2].map((i) =>
        fetch(`${h.url}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.all}`, 'content-type': 'application/json', accept: 'text/event-stream, application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/list' }),
        }),
      ),
    );
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      expect(res.headers.get('mcp-session-id')).toBeNull();
      const text = await res.text();
      const data = text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)));
      expect(data.at(-1)).toMatchObject({ jsonrpc: '2.0', id: 100 + i, result: { tools: expect.any(Array) } });
    }
  });

  it("a foreign Origin is refused with 403 (MCP DNS-rebinding rule); the service's own origin and no Origin pass", async () => {
    const post = (origin?: string) =>
      fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${keys.all}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      });
    const foreign = await post('http://evil.example.com');
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { error: 'forbidden' } } });
    expect((await post(new URL(h.url).origin)).status).toBe(200);
    expect((await post()).status).toBe(200);
  });

  it('SSE-first: a client that disconnects cancels its run (run_finished, status canceled)', async () => {
    const requested = new Promise<void>((resolve) => (onSlowRequest = resolve));
    const client = await connect(keys.all!, true);
    const call = client.callTool({ name: 'slow-page', arguments: {} });
    call.catch(() => undefined); // it rejects when the client closes
    // The browser step is waiting on the page: the run is in flight.
    await requested;
    const exec = (await owner.call('GET', '/api/executions?flow=slow-page')).body.executions[0];
    expect(exec).toMatchObject({ dispatch: 'mcp', status: 'running' });
    // Hang up: closing the transport aborts the SSE response's fetch.
    await client.close();
    const entries: { event: string; status?: string }[] = [];
    for await (const entry of h.engine.watch(exec.run_id)) {
      entries.push(entry as { event: string; status?: string });
      if (entry.event === 'run_finished') break;
    }
    expect(entries.at(-1)).toMatchObject({ event: 'run_finished', status: 'canceled' });
    expect((await h.engine.getRun(exec.run_id))!.status).toBe('canceled');
    // The executions index records the end too (written by the server after the cancel: awaited).
    await waitUntil(async () => (await owner.call('GET', `/api/executions/${exec.run_id}`)).body.execution.status === 'canceled', {
      what: 'the execution recorded canceled',
    });
    releaseSlow();
  }, 120_000);

  it('revision 2026-07-28: a client that closes its connection mid-call cancels its run', async () => {
    const requested = new Promise<void>((resolve) => (onSlowRequest = resolve));
    const client = new V2Client({ name: 'hosted-mcp-modern-cancel', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new V2Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.all}` } } }));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const call = client.callTool({ name: 'slow-page', arguments: {} });
    call.catch(() => undefined); // it rejects when the client closes
    await requested;
    const running = (await owner.call('GET', '/api/executions?flow=slow-page')).body.executions.filter((e: { status: string }) => e.status === 'running');
    expect(running).toHaveLength(1);
    await client.close();
    const runId = running[0].run_id as string;
    for await (const entry of h.engine.watch(runId)) if (entry.event === 'run_finished') break;
    expect((await h.engine.getRun(runId))!.status).toBe('canceled');
    releaseSlow();
  }, 120_000);
});
