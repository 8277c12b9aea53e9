import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitYaml } from '../../src/flow/emit.js';
import type { FlowSpec } from '../../src/flow/types.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { connectMcp, mcpProject, type McpSession } from './mcp-helpers.js';

/**
 * The hosted MCP endpoint's protocol rules against the shipped assembly, with the official SDK client
 * and raw requests: unknown `/.well-known/*` paths are JSON 404s (never the web app), JSON-RPC batches
 * are refused from revision 2025-06-18 on and answered under 2025-03-26, the hosted endpoint and
 * `flowctl mcp` (stdio, spawned) answer bad arguments and a failed run with the same payload, and
 * both servers give tool titles and server instructions.
 */

let h: HostedFixture;
let owner: Client;
let key: string;
let dir: string;
let stdio: McpSession;

// A port nothing listens on: navigating there fails at once, on both servers alike.
const REFUSED = 'http://127.0.0.1:1/';

async function connect(): Promise<McpClient> {
  const client = new McpClient({ name: 'hosted-mcp-protocol-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type'), json: await res.json() };
}

beforeAll(async () => {
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('mcp-protocol@example.test');
  await owner.call('POST', '/api/automations/example'); // example-forecast: input city, output forecast
  const a = (await owner.call('POST', '/api/automations', { name: 'goes-nowhere', site: REFUSED, task: 'Open a page that is not there' })).body.automation;
  await owner.call('PATCH', `/api/authoring/${a.id}`, {
    captured_ops: [
      { kind: 'navigate', url: REFUSED },
      { kind: 'extract', target: 'h1', name: 'title' },
    ],
  });
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  // The same FlowSpecs served by `flowctl mcp` in a project of their own.
  dir = await mcpProject({});
  for (const name of ['example-forecast', 'goes-nowhere']) {
    const spec = (await owner.call('GET', `/api/flowspecs/${name}`)).body as FlowSpec;
    await writeFile(join(dir, 'flows', `${name}.yaml`), emitYaml(spec));
  }
  stdio = await connectMcp(dir);
}, 180_000);
afterAll(async () => {
  await stdio?.close();
  await h?.close();
});

describe('hosted MCP: protocol rules', () => {
  it('unknown /.well-known/* paths are a JSON 404 not_found, never the web app', async () => {
    expect(h.service.webRoot).toBeDefined(); // the web app is served: its fallback would answer
    // The OAuth documents the service publishes are tested in hosted-oauth-metadata.test.ts.
    for (const path of ['/.well-known/oauth-protected-resource/other', '/.well-known/security.txt', '/.well-known/anything']) {
      const res = await fetch(`${h.url}${path}`);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 404, expect.stringMatching(/^application\/json/)]);
      const body = await res.json();
      expect(body).toEqual({ error: 'not_found', message: expect.any(String) });
    }
    // A client route of the web app still gets its page.
    expect((await fetch(`${h.url}/runs`)).headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('JSON-RPC batches: 400 with -32600 on 2025-06-18 and later; answered on 2025-03-26', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ];
    for (const version of ['2025-06-18', '2025-11-25']) {
      const r = await post(batch, { 'mcp-protocol-version': version });
      expect([version, r.status, r.type]).toEqual([version, 400, 'application/json']);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining(version) } });
    }
    // An initialize in a batch asks for its revision: the one it would negotiate decides.
    const init = (protocolVersion: string) => [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    ];
    const modern = await post(init('2025-06-18'));
    expect([modern.status, modern.json.error?.code]).toEqual([400, -32600]);
    const older = await post(init('2025-03-26'));
    expect(older.status).toBe(200);
    // (The SDK transport answers a batch of one with the one response.)
    expect([older.json].flat()).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ protocolVersion: '2025-03-26' }) })]);
    // 2025-03-26 by header, and without the header (which a server takes as 2025-03-26): one answer per request.
    for (const headers of [{ 'mcp-protocol-version': '2025-03-26' }, {}] as Record<string, string>[]) {
      const r = await post(batch, headers);
      expect(r.status).toBe(200);
      const answers = (r.json as { id: number; result: unknown }[]).sort((x, y) => x.id - y.id);
      expect(answers).toEqual([
        expect.objectContaining({ id: 1, result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'example-forecast' })]) } }),
        expect.objectContaining({ id: 2, result: {} }),
      ]);
    }
    // A single message under the newest revision is answered as always.
    expect((await post(batch[0], { 'mcp-protocol-version': '2025-11-25' })).status).toBe(200);
  });

  it('bad arguments and a failed run answer the same payload over hosted /mcp and stdio', async () => {
    const hosted = await connect();
    try {
      // Run ids and digests differ between the two stores: compare everything else, byte for byte.
      const normalized = (r: CallToolResult) => {
        const error = JSON.parse((r.content[0] as { text: string }).text).error as Record<string, string>;
        let text = JSON.stringify({ isError: r.isError, content: r.content, structuredContent: r.structuredContent, _meta: r._meta });
        for (const [k, v] of Object.entries(error)) if ((k === 'run_id' || k === 'flow_digest') && v) text = text.replaceAll(v, `<${k}>`);
        // Step durations are the two runs' own (the MCP Apps run view's timeline).
        return JSON.parse(text, (k, v) => (k === 'duration_ms' ? '<ms>' : v));
      };
      const bad = { name: 'example-forecast', arguments: { city: 7, days: 3 } };
      const hostedBad = (await hosted.callTool(bad)) as CallToolResult;
      const stdioBad = (await stdio.client.callTool(bad)) as CallToolResult;
      expect(JSON.parse((hostedBad.content[0] as { text: string }).text)).toEqual({
        error: {
          code: 'invalid_inputs',
          message: expect.stringMatching(/arguments of example-forecast violate its inputs contract; no run started: .*(city.*days|days.*city)/),
          issues: expect.arrayContaining([expect.objectContaining({ path: 'city' }), { path: 'days', message: 'is not an input of flow "example-forecast"' }]),
        },
      });
      expect(normalized(hostedBad)).toEqual(normalized(stdioBad));

      const fail = { name: 'goes-nowhere', arguments: {} };
      const hostedFail = (await hosted.callTool(fail)) as CallToolResult;
      const stdioFail = (await stdio.client.callTool(fail)) as CallToolResult;
      const error = JSON.parse((hostedFail.content[0] as { text: string }).text).error;
      expect(hostedFail.isError).toBe(true);
      expect(error).toEqual({
        code: expect.any(String),
        message: expect.stringContaining(`run ${error.run_id} of goes-nowhere failed at step ${error.step}: `),
        run_id: hostedFail._meta?.['flowctl/run_id'],
        status: 'failed',
        step: expect.any(String),
        flow_digest: hostedFail._meta?.['flowctl/flow_digest'],
      });
      expect(hostedFail._meta).toEqual({
        'flowctl/run_id': error.run_id,
        'flowctl/status': 'failed',
        'flowctl/flow_digest': error.flow_digest,
        // What the MCP Apps run view shows (docs/mcp.md, "MCP Apps").
        'flowctl/run_view': expect.objectContaining({
          run_id: error.run_id,
          flow: 'goes-nowhere',
          status: 'failed',
          error: expect.objectContaining({ step: error.step }),
        }),
      });
      expect(normalized(hostedFail)).toEqual(normalized(stdioFail));
      // An unknown tool: the same JSON-RPC error from both.
      const unknown = async (c: McpClient) => (await c.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: Error) => e)) as Error;
      expect((await unknown(hosted)).message).toBe((await unknown(stdio.client)).message);
      expect((await unknown(hosted)).message).toContain('unknown tool "no-such-tool"');
    } finally {
      await hosted.close();
    }
  }, 120_000);

  it('tool titles and server instructions, hosted and stdio', async () => {
    const hosted = await connect();
    try {
      const tools = (await hosted.listTools()).tools;
      expect(tools.find((t) => t.name === 'example-forecast')).toMatchObject({ title: 'Example forecast', description: expect.any(String) });
      expect(tools.find((t) => t.name === 'goes-nowhere')).toMatchObject({ title: 'Goes nowhere', description: 'Open a page that is not there' });
      const text = hosted.getInstructions();
      expect(text).toMatch(/Each tool runs one published automation of this organization/);
      expect(text).toContain(`${h.url}/runs/<run_id>`);
      expect(text).toContain('invalid_inputs');
    } finally {
      await hosted.close();
    }
    const stdioTools = (await stdio.client.listTools()).tools;
    expect(stdioTools.map((t) => [t.name, t.title])).toEqual([
      ['example-forecast', 'Example forecast'],
      ['goes-nowhere', 'Goes nowhere'],
    ]);
    const text = stdio.client.getInstructions();
    expect(text).toMatch(/Each tool runs one flow of this flowctl project/);
    expect(text).toContain('flowctl inspect <run_id>');
  });
});
