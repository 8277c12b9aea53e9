import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { createLauncher, resolveFlow, type ResolvedFlow } from '../../../src/launcher/launcher.js';
import { compileFlow } from '../../../src/flow/compile.js';
import { META } from '../../../src/mcp/results.js';
import { createMcpServer } from '../../../src/mcp/server.js';
import { toolShapeOf } from '../../../src/mcp/tool-schemas.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

// Two orgs each serve a flow named `invoice`, with different FlowSpecs, through ONE engine over one
// storage: the names are the orgs' own, so each run executes its own org's digest and no deploy is
// written (a third `invoice`, deployed beforehand by someone else, is neither run nor moved).
const tools = createToolRegistry(builtinTools());

function invoice(text: string): ResolvedFlow {
  const result = compileFlow(parse(text), { file: 'flows/invoice.yaml', tools });
  if (!result.ok) throw new Error(result.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
  return resolveFlow('invoice', result.spec);
}

const orgA = invoice(`name: invoice
description: Org A's invoice.
inputs:
  customer: {type: string, required: true}
steps:
  - {id: t, tool: core/template@1, args: {template: "A invoices \${inputs.customer}"}}
output: \${steps.t.output.text}
`);
const orgB = invoice(`name: invoice
description: Org B's invoice.
inputs:
  amount: {type: number, required: true}
steps:
  - id: t
    tool: core/transform@1
    args:
      value: {org: B, amount: "\${inputs.amount}"}
output: \${steps.t.output.value}
`);
const other = invoice(`name: invoice
steps:
  - {id: t, tool: core/template@1, args: {template: "the deployed one"}}
output: \${steps.t.output.text}
`);

const post = (body: unknown) =>
  new Request('http://127.0.0.1/flows/invoice/runs', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('two orgs, one engine, one flow name', () => {
  it("runs each org's own digest through the MCP factory and the launcher at once, writing no deploy", async () => {
    expect(new Set([orgA.digest, orgB.digest, other.digest]).size).toBe(3);
    const storage = createMemoryStorage();
    const engine = createEngine({ storage, tools });
    // Someone else's deploy of the same name, on the fronts the launcher and the MCP factory used to deploy to.
    await engine.deploy('invoice', other.spec, { front: 'rest' });
    await engine.deploy('invoice', other.spec, { front: 'mcp' });
    const fronts = ['rest', 'mcp', 'default'];
    const deploysBefore = await Promise.all(fronts.map((f) => storage.deploys.list(f)));

    // One MCP server per org (as a stateless per-request server would be), over the same engine.
    const clients = await Promise.all(
      [orgA, orgB].map(async (flow) => {
        const server = createMcpServer({ engine, flows: [flow], tools });
        const [a, b] = InMemoryTransport.createLinkedPair();
        await server.connect(a);
        const client = new Client({ name: 'test', version: '1' });
        await client.connect(b);
        return client;
      }),
    );
    const [launcherA, launcherB] = [orgA, orgB].map((flow) => createLauncher({ engine, flows: [flow] }));

    const [listA, listB] = await Promise.all(clients.map((c) => c.listTools()));
    expect(listA.tools.map((t) => [t.name, t.description, t._meta?.[META.flowDigest]])).toEqual([['invoice', "Org A's invoice.", orgA.digest]]);
    expect(listB.tools.map((t) => [t.name, t.description, t._meta?.[META.flowDigest]])).toEqual([['invoice', "Org B's invoice.", orgB.digest]]);
    // Each org's tool has its own inputs contract.
    expect(Object.keys(listA.tools[0]!.inputSchema.properties ?? {})).toEqual(['customer']);
    expect(Object.keys(listB.tools[0]!.inputSchema.properties ?? {})).toEqual(['amount']);

    // All four fronts at once, each run twice.
    const calls = [1, 2].flatMap((n) => [
      clients[0]!.callTool({ name: 'invoice', arguments: { customer: `acme-${n}` } }),
      clients[1]!.callTool({ name: 'invoice', arguments: { amount: n } }),
      launcherA.fetch(post({ customer: `globex-${n}` })).then((r) => r.json()),
      launcherB.fetch(post({ amount: 10 + n })).then((r) => r.json()),
    ]);
    const results = await Promise.all(calls);

    const runIds: [string, ResolvedFlow, unknown][] = [];
    for (const n of [0, 1]) {
      const [mcpA, mcpB, restA, restB] = results.slice(n * 4, n * 4 + 4) as [
        Awaited<ReturnType<Client['callTool']>>,
        Awaited<ReturnType<Client['callTool']>>,
        Record<string, unknown>,
        Record<string, unknown>,
      ];
      expect(mcpA.isError).toBeFalsy();
      expect(mcpA.structuredContent).toEqual({ value: `A invoices acme-${n + 1}` });
      expect(mcpA._meta?.[META.flowDigest]).toBe(orgA.digest);
      expect(mcpB.isError).toBeFalsy();
      expect(mcpB.structuredContent).toEqual({ value: { org: 'B', amount: n + 1 } });
      expect(mcpB._meta?.[META.flowDigest]).toBe(orgB.digest);
      expect(restA).toMatchObject({ status: 'succeeded', flow_digest: orgA.digest, output: `A invoices globex-${n + 1}` });
      expect(restB).toMatchObject({ status: 'succeeded', flow_digest: orgB.digest, output: { org: 'B', amount: 11 + n } });
      runIds.push(
        [mcpA._meta?.[META.runId] as string, orgA, `A invoices acme-${n + 1}`],
        [mcpB._meta?.[META.runId] as string, orgB, { org: 'B', amount: n + 1 }],
        [restA.id as string, orgA, `A invoices globex-${n + 1}`],
        [restB.id as string, orgB, { org: 'B', amount: 11 + n }],
      );
    }

    // The stored runs: each executed its own org's digest (record and journal), with its own output.
    expect(new Set(runIds.map(([id]) => id)).size).toBe(8);
    for (const [id, flow, output] of runIds) {
      const run = await engine.getRun(id);
      expect(run?.status).toBe('succeeded');
      expect(run?.flow_digest).toBe(flow.digest);
      expect(run?.journal[0]).toMatchObject({ event: 'run_started', flow_digest: flow.digest });
      expect(run?.output).toEqual(output);
    }
    expect((await engine.listRuns()).some((r) => r.flow_digest === other.digest)).toBe(false);

    // A caller's name is not a deploy: the store's deploys are exactly as before, and the name still
    // resolves to the third spec that was deployed under it.
    expect(await Promise.all(fronts.map((f) => storage.deploys.list(f)))).toEqual(deploysBefore);
    expect((await engine.resolve({ name: 'invoice', front: 'rest' }))?.digest).toBe(other.digest);
    expect((await engine.resolve({ name: 'invoice', front: 'mcp' }))?.digest).toBe(other.digest);
    // Both specs are stored by digest (once each), so the runs replay.
    expect(await storage.specs.get(orgA.digest)).toEqual(orgA.spec);
    expect(await storage.specs.get(orgB.digest)).toEqual(orgB.spec);
    const replayed = await engine.replay({ run_id: runIds[1]![0] }, { mode: 'verify' });
    expect(replayed.status).toBe('succeeded');

    await Promise.all(clients.map((c) => c.close()));
    await engine.dispose();
  });

  it("builds a flow's MCP tool shape once per digest and reuses it across servers", async () => {
    // A per-request server gets the shape built for the digest earlier, even from another spec object.
    const shape = toolShapeOf(orgB.spec, orgB.digest, tools);
    expect(toolShapeOf(structuredClone(orgB.spec), orgB.digest, tools)).toBe(shape);
    expect(Object.isFrozen(shape.inputSchema)).toBe(true);
    // Same name, different spec: a different digest, a different shape.
    expect(toolShapeOf(orgA.spec, orgA.digest, tools)).not.toBe(shape);

    const engine = createEngine({ storage: createMemoryStorage(), tools });
    const listed = [];
    for (let i = 0; i < 2; i++) {
      const server = createMcpServer({ engine, flows: [orgB], tools });
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(b);
      listed.push((await client.listTools()).tools[0]!);
      await client.close();
    }
    expect(listed[1]).toEqual(listed[0]);
    expect(listed[0]!.inputSchema).toEqual(shape.inputSchema);
    await engine.dispose();
  });
});
