import { describe, expect, it } from 'vitest';
import { createEnvSecrets, secretEnvName } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { isFlowError } from '../../../src/errors.js';
import type { JournalEntry, Run } from '../../../src/run/types.js';
import { makeSpec, recordingLogger, testEngine, testTools } from './helpers.js';

const CANARY = 'cAnArY-5ecret-7f3a9';
const env = { FLOWCTL_SECRET_API_TOKEN: CANARY };
const only = <E extends JournalEntry['event']>(run: Run, event: E) => run.journal.filter((e): e is Extract<JournalEntry, { event: E }> => e.event === event);

function secretSetup(steps: Parameters<typeof makeSpec>[1]) {
  const t = testTools();
  const logger = recordingLogger();
  const storage = createMemoryStorage();
  const { engine } = testEngine(t.registry, { secrets: createEnvSecrets({ env }), logger, storage });
  const spec = makeSpec(t.registry, steps, {
    inputs: { api_token: { type: 'string', secret: true } },
    output: { echoed: '${steps.use.output.echoed}', length: '${steps.use.output.length}' },
  });
  return { ...t, engine, spec, logger, storage };
}

describe('secrets-env', () => {
  it('maps a reference to FLOWCTL_SECRET_<NAME> (upper-cased, other characters to _)', async () => {
    expect(secretEnvName('secret:api_token')).toBe('FLOWCTL_SECRET_API_TOKEN');
    expect(secretEnvName('secret:db/pass-word.v2')).toBe('FLOWCTL_SECRET_DB_PASS_WORD_V2');
    const store = createEnvSecrets({ env: { FLOWCTL_SECRET_DB_PASS_WORD_V2: 'x' } });
    expect(await store.resolve('secret:db/pass-word.v2')).toBe('x');
    await expect(store.resolve('secret:missing')).rejects.toMatchObject({ code: 'secret_not_found' });
    await expect(store.resolve('not-a-ref')).rejects.toMatchObject({ code: 'invalid_secret_ref' });
  });
});

describe('engine: secrets', () => {
  it('resolves a defaulted reference inside the secrets step only, and masks it everywhere', async () => {
    const { engine, spec, logger, storage } = secretSetup([
      { id: 'plain', tool: 'test/echo', args: { token: '${inputs.api_token}' } },
      { id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}' }, secrets: true },
      { id: 'after', tool: 'test/echo', args: { saw: '${steps.use.output.url}' } },
    ]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('succeeded');
    // The step without the capability receives the reference, not the value.
    expect(only(run, 'step_succeeded')[0]!.output).toEqual({ token: 'secret:api_token' });
    // The tool did see the real value (its length), but every echo of it is masked.
    expect(run.output).toEqual({ echoed: '***', length: CANARY.length });
    expect(only(run, 'step_succeeded')[1]!.output).toMatchObject({ echoed: '***', url: 'https://api.example/?key=***' });
    expect(only(run, 'step_succeeded')[2]!.output).toEqual({ saw: 'https://api.example/?key=***' });
    expect(run.journal[0]).toMatchObject({ inputs: { api_token: 'secret:api_token' } });
    expect(JSON.stringify(run)).not.toContain(CANARY);
    expect(JSON.stringify(await storage.runs.list())).not.toContain(CANARY);
    expect(JSON.stringify(logger.lines)).not.toContain(CANARY);
  });

  it('masks the value in failure and retry paths (error messages that echo it)', async () => {
    const { engine, registry, logger } = secretSetup([]);
    const spec = makeSpec(
      registry,
      [{ id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}', fail: true }, secrets: true, retry: { max_attempts: 3 } }],
      {
        inputs: { api_token: { type: 'string', secret: true } },
      },
    );
    const run = await engine.run({ spec }, { api_token: 'secret:api_token' });
    expect(run.status).toBe('failed');
    const failed = only(run, 'step_failed');
    expect(failed).toHaveLength(3);
    expect(failed.map((e) => e.error.message)).toEqual(Array(3).fill('upstream rejected token ***'));
    expect(JSON.stringify(run)).not.toContain(CANARY);
    expect(JSON.stringify(logger.lines)).not.toContain(CANARY);
    expect(logger.lines.some((l) => l.message.includes('upstream rejected token ***'))).toBe(true);
  });

  it('refuses with secret_not_found before the run exists when the reference cannot be resolved (issue 12)', async () => {
    const { engine, spec, storage } = secretSetup([{ id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}' }, secrets: true }]);
    const empty = testEngine(testTools().registry, { secrets: createEnvSecrets({ env: {} }), storage }).engine;
    await expect(empty.run({ spec })).rejects.toMatchObject({
      code: 'secret_not_found',
      data: { issues: [{ path: 'api_token', message: expect.stringContaining('FLOWCTL_SECRET_API_TOKEN') }] },
    });
    const { registry } = testTools();
    const noStore = testEngine(registry, { storage }).engine;
    await expect(noStore.run({ spec })).rejects.toMatchObject({ code: 'secret_not_found', message: expect.stringContaining('no secret store') });
    expect(await engine.listRuns()).toEqual([]);
    // A caller may not name another secret (issue 12, defect 5).
    await expect(engine.run({ spec }, { api_token: 'secret:other' })).rejects.toMatchObject({ code: 'invalid_inputs' });
  });

  it('rejects a plain value for a secret input without echoing it', async () => {
    const { engine, spec } = secretSetup([{ id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}' }, secrets: true }]);
    let caught: unknown;
    try {
      await engine.run({ spec }, { api_token: CANARY });
    } catch (err) {
      caught = err;
    }
    expect(isFlowError(caught, 'invalid_inputs')).toBe(true);
    expect(JSON.stringify((caught as Error).message) + JSON.stringify((caught as { data: unknown }).data)).not.toContain(CANARY);
    expect(await engine.listRuns()).toEqual([]);
  });

  it('replays a secret run hermetically without resolving anything', async () => {
    const { engine, spec } = secretSetup([{ id: 'use', tool: 'test/secret-echo', args: { token: '${inputs.api_token}' }, secrets: true }]);
    const run = await engine.run({ spec });
    const replay = await engine.replay({ run_id: run.id }, { mode: 'verify' });
    expect(replay.output).toEqual({ echoed: '***', length: CANARY.length });
  });
});
