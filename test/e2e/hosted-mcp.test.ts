import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The hosted MCP endpoint with the official SDK client: tool filtering by publish state, mcp_enabled
 * and key scope; calls in JSON mode and SSE-first mode with progress from the run's journal; the
 * test-key rule; revoked keys; GET and DELETE 405.
 */

let h: HostedFixture;
let owner: Client;
const keys: Record<string, string> = {};

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
  h = await startHosted();
  owner = new Client(h.url);
  await owner.signup('mcp@example.test');
  await owner.call('POST', '/api/automations/example'); // example-forecast: input city, output forecast
  const page = `${h.url}/example/site`;
  await publish('read-title', [{ kind: 'navigate', url: page }, { kind: 'extract', target: 'h1', name: 'title' }]);
  const hidden = await publish('hidden-tool', [{ kind: 'navigate', url: page }, { kind: 'extract', target: 'h1', name: 'title' }]);
  await owner.call('PATCH', `/api/automations/${hidden}`, { mcp_enabled: false });
  await publish('uses-secret', [{ kind: 'navigate', url: page }, { kind: 'fill', target: { label: 'City' }, slot: 'home' }, { kind: 'extract', target: 'h1', name: 'title' }], { secret_slots: ['home'] });
  await owner.call('POST', '/api/automations', { name: 'never-published', site: page });
  keys.all = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  keys.scoped = (await owner.call('POST', '/api/keys', { mode: 'live', automations: ['read-title', 'hidden-tool', 'never-published'] })).body.secret;
  keys.test = (await owner.call('POST', '/api/keys', { mode: 'test' })).body.secret;
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('hosted MCP endpoint', () => {
  it('lists one tool per published, MCP-enabled automation within the key\'s scope', async () => {
    const all = await connect(keys.all!);
    const names = (await all.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['example-forecast', 'read-title', 'uses-secret']);
    const scoped = await connect(keys.scoped!);
    expect((await scoped.listTools()).tools.map((t) => t.name)).toEqual(['read-title']);
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
    await all.close();
    await scoped.close();
  });

  it('JSON mode: a call runs the live version and returns structuredContent; bad arguments are an isError result', async () => {
    const client = await connect(keys.all!);
    const r = await client.callTool({ name: 'example-forecast', arguments: { city: 'Quito' } });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { forecast: string }).forecast).toMatch(/^Forecast for Quito: /);
    const bad = await client.callTool({ name: 'example-forecast', arguments: { city: 7 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('invalid_arguments');
    const exec = await owner.call('GET', '/api/executions?flow=example-forecast');
    expect(exec.body.executions[0]).toMatchObject({ dispatch: 'mcp', status: 'succeeded', run_id: (r._meta as Record<string, string>)['flowctl/run_id'] });
    await client.close();
  });

  it('SSE-first mode: progress notifications replayed from the run\'s journal, one per finished step', async () => {
    const client = await connect(keys.all!, true);
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const r = await client.callTool({ name: 'read-title', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
    expect((r.structuredContent as { title: string }).title).toBe('Forecast demo');
    const runId = (r._meta as Record<string, string>)['flowctl/run_id'];
    const exec = await owner.call('GET', `/api/executions/${runId}`);
    const finishedSteps = exec.body.journal.filter((e: { event: string }) => e.event === 'step_succeeded').length;
    expect(progress.map((p) => p.progress)).toEqual(Array.from({ length: finishedSteps }, (_, i) => i + 1));
    expect(progress.every((p) => p.total === 2)).toBe(true);
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
});
