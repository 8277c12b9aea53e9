import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestOf } from '../../../src/canonical.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import { FlowError } from '../../../src/errors.js';
import { META } from '../../../src/mcp/results.js';
import { createMcpServer, type McpFlow } from '../../../src/mcp/server.js';
import { compileYaml, testRegistry } from './helpers.js';

const SECRET = 'sk-live-0123456789';

const FLOWS: Record<string, string> = {
  steps3: `name: steps3
description: Three pure steps.
inputs:
  n: {type: integer}
steps:
  - {id: one, tool: core/transform@1, args: {value: "\${inputs.n}"}}
  - {id: two, tool: core/transform@1, args: {value: "\${steps.one.output.value}"}}
  - {id: three, tool: core/transform@1, args: {value: "\${steps.two.output.value}"}}
output: \${steps.three.output.value}
`,
  keyed: `name: keyed
inputs:
  token: {type: string, secret: true}
steps:
  - {id: len, tool: test/secret-length@1, args: {token: "\${inputs.token}"}}
output:
  length: \${steps.len.output.length}
`,
  fails: `name: fails
steps:
  - {id: ok, tool: core/transform@1, args: {value: 1}}
  - {id: check, tool: core/assert@1, args: {actual: 1, expected: 2, message: one is not two}}
output:
  never: \${steps.ok.output.value}
`,
  quiet: `name: quiet
steps:
  - {id: ok, tool: core/transform@1, args: {value: 1}}
`,
};

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.dispose();
  engine = undefined;
});

async function connect(flows: McpFlow[] = Object.values(FLOWS).map((y) => ({ name: compileYaml(y).name, spec: compileYaml(y) }))) {
  const tools = testRegistry();
  engine = createEngine({
    storage: createMemoryStorage(),
    tools,
    secrets: {
      name: 'test',
      async resolve(ref) {
        if (ref === 'secret:token') return SECRET;
        throw new FlowError('secret_not_found', `no ${ref}`);
      },
    },
  });
  const logs: string[] = [];
  const server = createMcpServer({ engine, flows, tools, onLog: (level, m) => logs.push(`${level} ${m}`) });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  return { client, logs, engine };
}

describe('createMcpServer', () => {
  it('lists one tool per flow, sorted, deployed on the mcp front', async () => {
    const { client, engine } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['fails', 'keyed', 'quiet', 'steps3']);
    const keyed = tools.find((t) => t.name === 'keyed')!;
    expect(keyed.inputSchema).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
    expect(keyed._meta?.[META.secretInputs]).toEqual(['token']);
    const steps3 = tools.find((t) => t.name === 'steps3')!;
    expect(steps3.description).toBe('Three pure steps.');
    expect(steps3.outputSchema).toMatchObject({ type: 'object', required: ['value'], additionalProperties: false });
    expect(tools.find((t) => t.name === 'quiet')!.outputSchema).toBeUndefined();
    // Nothing is deployed (the tool names are the server's own); calls run by the announced digest.
    expect(await engine.resolve({ name: 'steps3', front: 'mcp' })).toBeUndefined();
    expect(steps3._meta?.[META.flowDigest]).toBe(digestOf(compileYaml(FLOWS.steps3)));
  });

  it('a call runs the flow, returns structuredContent, and progress follows the journal', async () => {
    const { client, engine } = await connect();
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'steps3', arguments: { n: 7 } }, undefined, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ value: 7 });
    expect(progress).toEqual([1, 2, 3].map((n) => ({ progress: n, total: 3, message: expect.stringContaining(`(${n}/3)`) })));
    const run = await engine.getRun(result._meta![META.runId] as string);
    expect(run?.status).toBe('succeeded');
    expect(run?.journal.filter((e) => e.event === 'step_succeeded')).toHaveLength(3);
  });

  it('a secret input resolves from the secret store; the value never appears in the result', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'keyed', arguments: {} });
    expect(result.structuredContent).toEqual({ length: SECRET.length });
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('invalid arguments are an isError result listing every issue; no run starts', async () => {
    const { client, engine } = await connect();
    const bad = await client.callTool({ name: 'steps3', arguments: { n: 'seven', extra: true } });
    expect(bad.isError).toBe(true);
    const body = JSON.parse((bad.content as { text: string }[])[0]!.text);
    expect(body.error.code).toBe('invalid_inputs');
    expect(body.error.issues).toEqual(
      expect.arrayContaining([
        { path: 'n', message: 'must be integer' },
        { path: 'extra', message: 'is not an input of flow "steps3"' },
      ]),
    );
    const secret = await client.callTool({ name: 'keyed', arguments: { token: SECRET } });
    expect(secret.isError).toBe(true);
    expect(JSON.stringify(secret)).not.toContain(SECRET);
    expect(JSON.stringify(secret)).toContain('is a secret input');
    expect(await engine.listRuns()).toHaveLength(0);
  });

  it('a failed run is an isError result with the run id and the failing step error', async () => {
    const { client, engine, logs } = await connect();
    const result = await client.callTool({ name: 'fails', arguments: {} });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as { text: string }[])[0]!.text);
    expect(error).toMatchObject({ code: 'assertion_failed', step: 'check', status: 'failed' });
    expect(error.message).toContain('one is not two');
    expect((await engine.getRun(error.run_id))?.status).toBe('failed');
    expect(result._meta?.[META.runId]).toBe(error.run_id);
    expect(logs.some((l) => l.includes(`run ${error.run_id} failed`))).toBe(true);
  });

  it('a flow without output answers with text only; an unknown tool is a protocol error', async () => {
    const { client } = await connect();
    const quiet = await client.callTool({ name: 'quiet', arguments: {} });
    expect(quiet.structuredContent).toBeUndefined();
    expect((quiet.content as { text: string }[])[0]!.text).toMatch(/^run [0-9a-f-]{36} of quiet succeeded/);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/unknown tool "nope"/);
  });

  it('refuses duplicate and invalid tool names', () => {
    const spec = compileYaml(FLOWS.quiet!);
    const e = createEngine({ storage: createMemoryStorage() });
    expect(() =>
      createMcpServer({
        engine: e,
        flows: [
          { name: 'quiet', spec },
          { name: 'quiet', spec },
        ],
      }),
    ).toThrow(/two flows are named/);
    expect(() => createMcpServer({ engine: e, flows: [{ name: 'has space', spec }] })).toThrow(/not a valid MCP tool name/);
  });
});
