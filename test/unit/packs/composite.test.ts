import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestOf } from '../../../src/canonical.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { flowRunnerFromEngine } from '../../../src/packs/composite.js';
import { loadRegistryTools } from '../../../src/packs/load.js';
import { publishPack } from '../../../src/packs/publish.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { build, greetingDraft } from './fixtures.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-composite-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('composite tools through an engine', () => {
  it('runs the implementing flow as a nested run and returns its output', async () => {
    const reg = join(root, 'reg');
    await publishPack(reg, await build(greetingDraft('alpha', '1.0.0', 'Salut')));
    let engine: Engine | undefined;
    const packTools = await loadRegistryTools(reg, { runFlow: flowRunnerFromEngine(() => engine!), runtimeTools: createToolRegistry(builtinTools()) });
    engine = createEngine({ storage: createMemoryStorage(), tools: createToolRegistry(builtinTools(), packTools) });
    const tool = packTools[0]!;
    const spec: FlowSpec = {
      flowspec: 1,
      name: 'caller',
      inputs: { who: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
      steps: [
        {
          id: 'call',
          tool: { ref: tool.contract.ref, version: tool.contract.version, contract_digest: digestOf(tool.contract) },
          capabilities: [],
          args: { who: '${ inputs.who }' },
          retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 2 },
          timeout_ms: 30000,
        },
      ],
      output: '${ steps.call.output }',
    };
    const run = await engine.run({ spec }, { who: 'Ada' });
    expect(run.status).toBe('succeeded');
    expect(run.output).toBe('Salut, Ada!');
    // The nested run is stored too: the caller's run and the composite flow's run.
    expect((await engine.listRuns()).length).toBe(2);

    // A call whose input violates the implementing flow's inputs fails with the engine's error.
    const ctx = { signal: new AbortController().signal, effect() {} } as never;
    await expect(tool.run({ who: 42 }, ctx)).rejects.toMatchObject({ code: 'invalid_inputs' });
    await engine.dispose();
  });
});
