import { describe, expect, it } from 'vitest';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { makeSpec, testEngine, testTools } from './helpers.js';

// RunOptions.secrets: one engine serves many tenants, each run with its own secret store.
describe("engine: a run's own secret store", () => {
  const setup = () => {
    const t = testTools();
    const { engine } = testEngine(t.registry, { storage: createMemoryStorage() });
    const spec = makeSpec(t.registry, [{ id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}' }, secrets: true }], {
      inputs: { api_token: { type: 'string', secret: true } },
      output: { length: '${steps.use.output.length}' },
    });
    return { engine, spec };
  };

  it("resolves from the run's store, not the engine's; each run its own", async () => {
    const { engine, spec } = setup();
    const orgA = createEnvSecrets({ env: { FLOWCTL_SECRET_API_TOKEN: 'aaaa' } });
    const orgB = createEnvSecrets({ env: { FLOWCTL_SECRET_API_TOKEN: 'bbbbbbbb' } });
    const [a, b] = await Promise.all([engine.run({ spec }, {}, { secrets: orgA }), engine.run({ spec }, {}, { secrets: orgB })]);
    expect(a.output).toEqual({ length: 4 });
    expect(b.output).toEqual({ length: 8 });
    expect(JSON.stringify([a, b])).not.toMatch(/aaaa|bbbbbbbb/);
  });

  it('a run without a store (and an engine without one) is refused before it exists: secret_not_found', async () => {
    const { engine, spec } = setup();
    await expect(engine.run({ spec })).rejects.toMatchObject({ code: 'secret_not_found' });
    expect(await engine.listRuns()).toEqual([]);
    await expect(engine.start({ spec }, {}, { secrets: createEnvSecrets({ env: {} }) })).rejects.toMatchObject({ code: 'secret_not_found' });
  });
});
