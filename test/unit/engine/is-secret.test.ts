import { describe, expect, it } from 'vitest';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { compile } from '../../../src/flow/compile.js';
import { defineTool } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

describe('ToolContext.isSecret', () => {
  it('tells a tool which of its input texts hold a secret resolved in this run', async () => {
    const seen: { secret: boolean; plain: boolean }[] = [];
    const probe = defineTool(
      {
        ref: 'test/probe',
        version: '1.0.0',
        description: 'Reports what isSecret says about its inputs.',
        input_schema: { type: 'object', properties: { secret: { type: 'string' }, plain: { type: 'string' } }, additionalProperties: false },
        output_schema: { type: 'object' },
        capabilities: ['secrets'],
      },
      async (input: { secret: string; plain: string }, ctx) => {
        seen.push({ secret: ctx.isSecret?.(input.secret) ?? false, plain: ctx.isSecret?.(input.plain) ?? false });
        return {};
      },
    );
    const tools = createToolRegistry([probe]);
    const r = compile(
      'name: probe\ninputs:\n  pw: {type: string, secret: true}\nsteps:\n  - id: p\n    tool: test/probe@1\n    args: {secret: "${inputs.pw}", plain: hello}\n',
      { file: 'probe.yaml', tools },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
    const engine = createEngine({ storage: createMemoryStorage(), tools, secrets: createEnvSecrets({ env: { FLOWCTL_SECRET_PW: 's3cr3t-value' } }) });
    const run = await engine.run({ spec: r.spec }, {});
    expect(run.status).toBe('succeeded');
    expect(seen).toEqual([{ secret: true, plain: false }]);
    await engine.dispose();
  });
});
