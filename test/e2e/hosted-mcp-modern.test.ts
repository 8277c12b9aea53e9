import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitYaml } from '../../src/flow/emit.js';
import type { FlowSpec } from '../../src/flow/types.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { connectMcp, mcpProject, type McpSession } from './mcp-helpers.js';

/**
 * The hosted MCP endpoint at protocol revision 2026-07-28 (stateless, `server/discover`), with the
 * official v2 client (`@modelcontextprotocol/client`) pinned to it, beside the 1.x SDK client at
 * 2025-11-25 against the same service: the same tools, results and errors on both eras, the
 * endpoint's HTTP rules (Origin, test keys) on the new one too, and tool `_meta` (secret inputs, the
 * MCP Apps resource) the same as `flowctl mcp` (stdio) serves for the same FlowSpec.
 */

let h: HostedFixture;
let owner: Client;
let key: string;
let testKey: string;
let dir: string;
let stdio: McpSession;

const REFUSED = 'http://127.0.0.1:1/';
type Result = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, any> };

async function modern(secret = key): Promise<V2Client> {
  const client = new V2Client({ name: 'hosted-mcp-modern-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new V2Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return client;
}

/** The v2 client with its Accept rewritten (SSE first), recording each response's content type by JSON-RPC method. */
async function modernSseFirst(seen: { method: string; type: string | null }[]): Promise<V2Client> {
  const client = new V2Client({ name: 'hosted-mcp-modern-sse', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const sseFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    if (headers.has('accept')) headers.set('accept', 'text/event-stream, application/json');
    const res = await fetch(input, { ...init, headers });
    const method = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }).method : undefined;
    if (method) seen.push({ method, type: res.headers.get('content-type') });
    return res;
  };
  await client.connect(new V2Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: sseFetch }));
  return client;
}

async function legacy(): Promise<{ client: V1Client; transport: V1Transport }> {
  const client = new V1Client({ name: 'hosted-mcp-legacy-test', version: '1.0.0' });
  const transport = new V1Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return { client, transport };
}

async function publish(name: string, site: string, ops: unknown[], slots: { secret_slots?: string[] } = {}) {
  const a = (await owner.call('POST', '/api/automations', { name, site, task: `Task of ${name}` })).body.automation;
  await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, ...slots });
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
}

beforeAll(async () => {
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('mcp-modern@example.test');
  await owner.call('POST', '/api/automations/example'); // example-forecast: input city, output forecast
  await publish('goes-nowhere', REFUSED, [
    { kind: 'navigate', url: REFUSED },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  await publish(
    'uses-secret',
    `${h.url}/example/site`,
    [
      { kind: 'navigate', url: h.exampleSiteUrl },
      { kind: 'fill', target: { label: 'City' }, slot: 'home' },
      { kind: 'extract', target: 'h1', name: 'title' },
    ],
    { secret_slots: ['home'] },
  );
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  testKey = (await owner.call('POST', '/api/keys', { mode: 'test' })).body.secret;
  // The same FlowSpecs served by `flowctl mcp` (stdio) in a project of their own.
  dir = await mcpProject({});
  for (const name of ['example-forecast', 'uses-secret']) {
    const spec = (await owner.call('GET', `/api/flowspecs/${name}`)).body as FlowSpec;
    await writeFile(join(dir, 'flows', `${name}.yaml`), emitYaml(spec));
  }
  stdio = await connectMcp(dir);
}, 180_000);
afterAll(async () => {
  await stdio?.close();
  await h?.close();
});

describe('hosted MCP: revision 2026-07-28 beside 2025-11-25', () => {
  it('the v2 client pinned to 2026-07-28 negotiates it; the 1.x client still gets 2025-11-25', async () => {
    const client = await modern();
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getServerVersion()).toMatchObject({ name: 'flowctl-hosted' });
      expect(client.getInstructions()).toMatch(/Each tool runs one published automation of this organization/);
    } finally {
      await client.close();
    }
    const { client: old, transport } = await legacy();
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      expect((await old.listTools()).tools.map((t) => t.name).sort()).toEqual(['example-forecast', 'goes-nowhere', 'uses-secret']);
    } finally {
      await old.close();
    }
  });

  it('tools/list: the same tools on both eras, tool _meta the same as stdio (secret inputs, MCP Apps resource)', async () => {
    const client = await modern();
    const { client: old } = await legacy();
    try {
      const tools = (await client.listTools()).tools;
      const oldTools = (await old.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(['example-forecast', 'goes-nowhere', 'uses-secret']);
      expect(
        tools.map(({ name, title, inputSchema, outputSchema, annotations, _meta }) => ({ name, title, inputSchema, outputSchema, annotations, _meta })),
      ).toEqual(
        oldTools.map(({ name, title, inputSchema, outputSchema, annotations, _meta }) => ({ name, title, inputSchema, outputSchema, annotations, _meta })),
      );
      const secret = tools.find((t) => t.name === 'uses-secret')!;
      expect(secret._meta).toMatchObject({ 'flowctl/secret_inputs': ['home'], ui: { resourceUri: 'ui://flowctl/run-view.html' } });
      expect(secret.inputSchema.properties).not.toHaveProperty('home');
      expect(tools.find((t) => t.name === 'example-forecast')!._meta).not.toHaveProperty(['flowctl/secret_inputs']);
      // stdio serves the same FlowSpecs: the same _meta (one shape helper), digests aside.
      const stdioTools = (await stdio.client.listTools()).tools;
      for (const name of ['example-forecast', 'uses-secret']) {
        const hostedMeta = { ...tools.find((t) => t.name === name)!._meta, 'flowctl/flow_digest': '<digest>' };
        const stdioMeta = { ...stdioTools.find((t) => t.name === name)!._meta, 'flowctl/flow_digest': '<digest>' };
        expect([name, hostedMeta]).toEqual([name, stdioMeta]);
      }
      // And the same MCP Apps resource.
      expect((await stdio.client.listResources()).resources).toEqual((await client.listResources()).resources);
      expect((await stdio.client.readResource({ uri: 'ui://flowctl/run-view.html' })).contents).toEqual(
        (await client.readResource({ uri: 'ui://flowctl/run-view.html' })).contents,
      );
    } finally {
      await client.close();
      await old.close();
    }
  });

  it('tools/call on 2026-07-28: a run with progress, invalid_inputs, a failed run; the same payloads as 2025-11-25', async () => {
    const client = await modern();
    const { client: old } = await legacy();
    try {
      const progress: number[] = [];
      const ok = (await client.callTool(
        { name: 'example-forecast', arguments: { city: 'Porto' } },
        { onprogress: (p) => progress.push(p.progress) },
      )) as Result;
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent).toEqual({ forecast: expect.any(String) });
      expect(ok._meta).toMatchObject({ 'flowctl/status': 'succeeded', 'flowctl/run_id': expect.any(String) });
      // Progress is the run's journal: one update per step, in order.
      expect(progress.length).toBeGreaterThan(0);
      expect([...progress].sort((a, b) => a - b)).toEqual(progress);
      const run = (await owner.call('GET', `/api/executions/${ok._meta!['flowctl/run_id']}`)).body;
      expect(run.execution).toMatchObject({ status: 'succeeded', dispatch: 'mcp' });

      const bad = { name: 'example-forecast', arguments: { city: 7, days: 3 } };
      const modernBad = (await client.callTool(bad)) as Result;
      const legacyBad = (await old.callTool(bad)) as Result;
      expect(modernBad.isError).toBe(true);
      expect(JSON.parse(modernBad.content[0]!.text!)).toEqual({
        error: {
          code: 'invalid_inputs',
          message: expect.stringMatching(/arguments of example-forecast violate its inputs contract; no run started/),
          issues: expect.arrayContaining([expect.objectContaining({ path: 'city' }), { path: 'days', message: 'is not an input of flow "example-forecast"' }]),
        },
      });
      expect(modernBad.content).toEqual(legacyBad.content);

      const fail = { name: 'goes-nowhere', arguments: {} };
      const modernFail = (await client.callTool(fail)) as Result;
      const legacyFail = (await old.callTool(fail)) as Result;
      const error = JSON.parse(modernFail.content[0]!.text!).error;
      expect(modernFail.isError).toBe(true);
      expect(error).toMatchObject({ run_id: modernFail._meta!['flowctl/run_id'], status: 'failed', step: expect.any(String), code: expect.any(String) });
      const normalized = (r: Result) => {
        const e = JSON.parse(r.content[0]!.text!).error;
        let text = JSON.stringify({ isError: r.isError, content: r.content, meta: { ...r._meta, 'io.modelcontextprotocol/serverInfo': undefined } });
        for (const v of [e.run_id, e.flow_digest]) text = text.replaceAll(v, '<id>');
        return JSON.parse(text, (k, v) => (k === 'duration_ms' ? '<ms>' : v));
      };
      expect(normalized(modernFail)).toEqual(normalized(legacyFail));
      // An unknown tool is a JSON-RPC error on both eras.
      const unknown = (await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: Error) => e)) as Error;
      expect(unknown).toBeInstanceOf(Error);
      expect(unknown.message).toContain('unknown tool "no-such-tool"');
    } finally {
      await client.close();
      await old.close();
    }
  }, 180_000);

  it('the Accept rule on 2026-07-28: an SSE-first client gets streams, with progress from the journal', async () => {
    const seen: { method: string; type: string | null }[] = [];
    const client = await modernSseFirst(seen);
    try {
      expect((await client.listTools()).tools.length).toBe(3);
      const progress: number[] = [];
      const r = (await client.callTool({ name: 'example-forecast', arguments: { city: 'Faro' } }, { onprogress: (p) => progress.push(p.progress) })) as Result;
      expect(r.structuredContent).toEqual({ forecast: expect.any(String) });
      expect(progress.length).toBeGreaterThan(0);
      expect(seen.filter((s) => s.method === 'tools/list' || s.method === 'tools/call')).toEqual([
        { method: 'tools/list', type: expect.stringMatching(/^text\/event-stream/) },
        { method: 'tools/call', type: expect.stringMatching(/^text\/event-stream/) },
      ]);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('the endpoint rules hold on 2026-07-28: test keys refused for secret tools, foreign Origins 403, batches 400', async () => {
    const client = await modern(testKey);
    try {
      const refused = (await client.callTool({ name: 'uses-secret', arguments: {} }).catch((e: Error) => e)) as Error;
      expect(refused).toBeInstanceOf(Error);
      expect(refused.message).toMatch(/test_key_forbidden|403/);
    } finally {
      await client.close();
    }
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } };
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    };
    const foreign = await fetch(`${h.url}/mcp`, { method: 'POST', headers: { ...headers, origin: 'https://evil.example' }, body: JSON.stringify(body) });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.data).toEqual({ error: 'forbidden' });
    const batch = await fetch(`${h.url}/mcp`, { method: 'POST', headers, body: JSON.stringify([body, { ...body, id: 2 }]) });
    expect(batch.status).toBe(400);
    expect((await batch.json()).error.code).toBe(-32600);
  });
});
