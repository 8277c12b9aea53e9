import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CallToolResultSchema, ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { connectMcp, ECHO_PAGE, mcpProject, type McpSession } from './mcp-helpers.js';

// `flowctl mcp` spawned as a real stdio server, driven by the MCP SDK's own Client.
const CANARY = 'canary-mcp-4d1f-secret';
let dir: string;
let session: McpSession;
let page: Server;
let pageUrl: string;

beforeAll(async () => {
  dir = await mcpProject();
  page = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(ECHO_PAGE);
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  session = await connectMcp(dir, [], { FLOWCTL_SECRET_PASSWORD: CANARY });
});

afterAll(async () => {
  await session?.close();
  await new Promise<void>((r) => page.close(() => r()));
});

const textOf = (result: object) => (result as { content: { type: string; text: string }[] }).content[0]!.text;

describe('flowctl mcp over stdio (SDK Client)', () => {
  it('tools/list has one tool per flow with its schemas and annotations', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['broken', 'count', 'hello', 'save', 'secretecho']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.hello!.description).toBe('Greets someone.');
    expect(byName.hello!.inputSchema).toEqual({
      type: 'object',
      properties: { who: { type: 'string', description: 'Who to greet.', default: 'world' } },
      required: [],
      additionalProperties: false,
    });
    expect(byName.hello!.outputSchema).toEqual({
      type: 'object',
      properties: { greeting: { anyOf: [{ type: 'null' }, { type: 'string' }] } },
      required: ['greeting'],
      additionalProperties: false,
    });
    expect(byName.hello!.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    // Not an object projection: wrapped as {value}.
    expect(byName.count!.outputSchema).toMatchObject({ type: 'object', required: ['value'] });
    expect(byName.count!.inputSchema).toMatchObject({ required: ['n'] });
    // The secret input is left out: it resolves from the secret store.
    expect(Object.keys((byName.secretecho!.inputSchema.properties ?? {}) as object)).toEqual(['url']);
    expect(byName.secretecho!._meta?.['flowctl/secret_inputs']).toEqual(['password']);
    expect(byName.secretecho!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(byName.save!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    for (const t of tools) expect(t._meta?.['flowctl/flow_digest']).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('tools/call runs a flow, returns structuredContent, and the run is in .flowctl/ for inspect', async () => {
    const result = await session.client.callTool({ name: 'hello', arguments: { who: 'Ada' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
    expect(JSON.parse(textOf(result))).toEqual({ greeting: 'Hello, Ada!' });
    const runId = result._meta?.['flowctl/run_id'] as string;
    const inspect = await runCli(['inspect', runId, '--json'], { cwd: dir });
    expect(inspect.code, inspect.stderr).toBe(0);
    const run = JSON.parse(inspect.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ greeting: 'Hello, Ada!' });
    expect(session.stderr()).toContain(`run ${runId} succeeded`);
  });

  it('progress notifications follow the journal when the request carries a progress token', async () => {
    // The SDK Client drops progress that arrives in the same stdout chunk as the response (its
    // notification handlers run a microtask later, after the response removed the progress handler).
    // So this test collects notifications/progress itself, sends the token itself, and lets queued
    // handlers run once after the response: the server writes every progress notification before it.
    const progress: { progress: number; total?: number; message?: string }[] = [];
    session.client.setNotificationHandler(ProgressNotificationSchema, (n) => {
      if (n.params.progressToken === 'count-progress') progress.push(n.params);
    });
    const result = await session.client.request(
      { method: 'tools/call', params: { name: 'count', arguments: { n: 42 }, _meta: { progressToken: 'count-progress' } } },
      CallToolResultSchema,
    );
    await new Promise((r) => setImmediate(r));
    expect(result.structuredContent).toEqual({ value: 42 });
    expect(progress.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(progress.map((p) => p.message)).toEqual(['step one succeeded (1/3)', 'step two succeeded (2/3)', 'step three succeeded (3/3)']);
  });

  it('bad arguments give an isError result with the issues, and no run', async () => {
    // `runs` lists the stored runs (one line each, on stderr).
    const before = (await runCli(['runs'], { cwd: dir })).stderr;
    expect(before).toMatch(/[0-9a-f-]{36}/);
    const result = await session.client.callTool({ name: 'count', arguments: { n: 'many', m: 1 } });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse(textOf(result));
    expect(error.code).toBe('invalid_inputs');
    expect(error.issues).toEqual(
      expect.arrayContaining([
        { path: 'n', message: 'must be integer' },
        { path: 'm', message: 'is not an input of flow "count"' },
      ]),
    );
    const missing = await session.client.callTool({ name: 'count', arguments: {} });
    expect(JSON.parse(textOf(missing)).error.issues).toEqual([{ path: 'n', message: 'is required' }]);
    // A secret value offered as an argument is refused and never echoed.
    const secret = await session.client.callTool({ name: 'secretecho', arguments: { url: pageUrl, password: CANARY } });
    expect(secret.isError).toBe(true);
    expect(JSON.stringify(secret)).not.toContain(CANARY);
    expect((await runCli(['runs'], { cwd: dir })).stderr).toBe(before);
  });

  it('a failing flow gives an isError result with the run id and the failing step error', async () => {
    const result = await session.client.callTool({ name: 'broken', arguments: {} });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse(textOf(result));
    expect(error).toMatchObject({ code: 'assertion_failed', step: 'check', status: 'failed' });
    expect(error.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.message).toContain('one is not two');
    const inspect = await runCli(['inspect', error.run_id, '--json'], { cwd: dir });
    expect(JSON.parse(inspect.stdout).status).toBe('failed');
  });

  it('an outward flow runs without a prompt (the client decided to call it)', async () => {
    const result = await session.client.callTool({ name: 'save', arguments: { text: 'from mcp' } });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await readFile(join(dir, 'out/saved.txt'), 'utf8')).toBe('from mcp');
  });

  it('a browser flow resolves its secret from the store; the value never leaves the server', async () => {
    const result = await session.client.callTool({ name: 'secretecho', arguments: { url: pageUrl } });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({ echoed: 'typed:***' });
    expect(JSON.stringify(result)).not.toContain(CANARY);
    expect(session.stderr()).not.toContain(CANARY);
  });
});

describe('flowctl mcp as a plain stdio process', () => {
  it('answers requests piped on stdin, writes only JSON-RPC to stdout, and exits 0 when stdin ends', async () => {
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hello', arguments: {}, _meta: { progressToken: 'p1' } } },
    ];
    const r = await runCli(['mcp', 'hello'], { cwd: dir, input: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n` });
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(out.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(out.find((m) => m.id === 1).result.serverInfo.name).toBe('flowctl');
    expect(out.find((m) => m.method === 'notifications/progress').params).toMatchObject({ progressToken: 'p1', progress: 1, total: 1 });
    expect(out.find((m) => m.id === 2).result.structuredContent).toEqual({ greeting: 'Hello, world!' });
    expect(r.stderr).toContain('serving 1 tool over stdio');
  });

  it('an unknown [flow] is a usage error (exit 2), with nothing on stdout', async () => {
    const r = await runCli(['mcp', 'nope'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/flow "nope" not found/);
  });
});

describe('flowctl mcp --registry', () => {
  it('serves the flows of the packs in a registry directory', async () => {
    const author = await tempProject('flowctl-mcp-pack-');
    for (const args of [
      ['init'],
      ['pack', 'init', 'greeter', '--version', '1.0.0'],
      ['pack', 'add', '--body', 'flows/hello.yaml'],
      ['pack', 'publish', '--registry', 'shared'],
    ]) {
      const r = await runCli(args, { cwd: author });
      expect(r.code, r.stderr).toBe(0);
    }
    const user = await tempProject('flowctl-mcp-user-');
    const s = await connectMcp(user, ['--registry', join(author, 'shared')]);
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['hello']);
      const result = await s.client.callTool({ name: 'hello', arguments: {} });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain('Hello');
      expect(s.stderr()).toContain('greeter@1.0.0');
    } finally {
      await s.close();
    }
    // The run went to the user's project store.
    expect((await runCli(['runs', 'last'], { cwd: user })).stdout).toMatch(/^[0-9a-f-]{36}\n$/);
  });
});
