import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestOf, DIGEST_PATTERN } from '../../../src/canonical.js';
import { isFlowError } from '../../../src/errors.js';
import type { Executor } from '../../../src/ports/executor.js';
import { verifyJournal } from '../../../src/run/fixture.js';
import { parseRun } from '../../../src/run/run-schema.js';
import type { JournalEntry, Run } from '../../../src/run/types.js';
import type { EffectSummary } from '../../../src/engine/types.js';
import { makeSpec, recordingLogger, testEngine, testTools } from './helpers.js';

const events = (run: Run) => run.journal.map((e) => ('step' in e ? `${e.event}:${e.step}` : e.event));
const only = <E extends JournalEntry['event']>(run: Run, event: E) => run.journal.filter((e): e is Extract<JournalEntry, { event: E }> => e.event === event);

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('engine: a successful run', () => {
  it('journals every step with digests, a valid chain and the output', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(
      registry,
      [
        { id: 'greet', tool: 'test/echo', args: { text: 'hello ${inputs.name}' } },
        { id: 'again', tool: 'test/echo', args: { prev: '${steps.greet.output.text}' } },
      ],
      { inputs: { name: { type: 'string', required: true } }, output: { said: '${steps.again.output.prev}' } },
    );
    const run = await engine.run({ spec }, { name: 'Ada' });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ said: 'hello Ada' });
    expect(events(run)).toEqual(['run_started', 'step_started:greet', 'step_succeeded:greet', 'step_started:again', 'step_succeeded:again', 'run_finished']);
    expect(run.finished_at).toBe(run.journal.at(-1)!.at);
    const flowDigest = digestOf(spec);
    const inputsDigest = digestOf({ name: 'Ada' });
    for (const [i, e] of run.journal.entries()) {
      expect(e).toMatchObject({ seq: i, flow_digest: flowDigest, inputs_digest: inputsDigest });
      expect(e.digest).toMatch(DIGEST_PATTERN);
    }
    expect(() => verifyJournal(run)).not.toThrow();
    const started = run.journal[0]!;
    expect(started).toMatchObject({ event: 'run_started', flow_name: 'test-flow', inputs: { name: 'Ada' } });
    expect(started.event === 'run_started' && started.contracts).toEqual([spec.steps[0]!.tool]);
    const [s1] = only(run, 'step_started');
    expect(s1).toMatchObject({
      step: 'greet',
      attempt: 1,
      input: { text: 'hello Ada' },
      input_digest: digestOf({ text: 'hello Ada' }),
      provider: 'in-process',
      tool: spec.steps[0]!.tool,
    });
    const [ok1] = only(run, 'step_succeeded');
    expect(ok1!.output_digest).toBe(digestOf(ok1!.output));
    expect(only(run, 'run_finished')[0]).toMatchObject({ status: 'succeeded', output: { said: 'hello Ada' } });
    expect(() => parseRun(run)).not.toThrow();
  });

  it('gives two equal runs identical entry digests and chains (run id and time never enter a digest)', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/echo', args: { v: '${inputs.n}' } }], { inputs: { n: { type: 'number' } } });
    const one = await engine.run({ spec }, { n: 1 });
    const two = await engine.run({ spec }, { n: 1 });
    expect(one.id).not.toBe(two.id);
    expect(one.journal.map((e) => e.at)).not.toEqual(two.journal.map((e) => e.at));
    expect(one.journal.map((e) => e.digest)).toEqual(two.journal.map((e) => e.digest));
    const three = await engine.run({ spec }, { n: 2 });
    expect(three.journal[0]!.digest).not.toBe(one.journal[0]!.digest);
  });

  it('applies input defaults and records the resolved inputs', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/echo', args: { v: '${inputs.size}' } }], {
      inputs: { size: { type: 'integer', default: 3 } },
    });
    const run = await engine.run({ spec });
    expect(run.journal[0]).toMatchObject({ inputs: { size: 3 }, inputs_digest: digestOf({ size: 3 }) });
    expect(only(run, 'step_succeeded')[0]!.output).toEqual({ v: 3 });
  });

  it('calls onEntry for every entry in order', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const seen: number[] = [];
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/echo' }]) }, {}, { onEntry: (e) => seen.push(e.seq) });
    expect(seen).toEqual(run.journal.map((e) => e.seq));
  });
});

describe('engine: skips, retries and failures', () => {
  it('skips a step whose `if` is false, and later steps see it as skipped', async () => {
    const { registry, calls } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(
      registry,
      [
        { id: 'maybe', tool: 'test/echo', if: 'inputs.go == true' },
        { id: 'after', tool: 'test/echo', args: { status: '${steps.maybe.status}' } },
      ],
      { inputs: { go: { type: 'boolean', default: false } } },
    );
    const run = await engine.run({ spec });
    expect(events(run)).toEqual(['run_started', 'step_skipped:maybe', 'step_started:after', 'step_succeeded:after', 'run_finished']);
    expect(only(run, 'step_skipped')[0]!.reason).toContain('inputs.go == true');
    expect(only(run, 'step_succeeded')[0]!.output).toEqual({ status: 'skipped' });
    expect(calls['test/echo']).toBe(1);
  });

  it('retries a retryable failure with backoff, journaling every attempt', async () => {
    const { registry } = testTools();
    const { engine, clock } = testEngine(registry);
    const spec = makeSpec(registry, [
      { id: 'f', tool: 'test/flaky', args: { key: 'k', times: 2 }, retry: { max_attempts: 3, backoff_ms: 10, backoff_factor: 2 } },
    ]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('succeeded');
    expect(events(run)).toEqual([
      'run_started',
      'step_started:f',
      'step_failed:f',
      'step_started:f',
      'step_failed:f',
      'step_started:f',
      'step_succeeded:f',
      'run_finished',
    ]);
    expect(only(run, 'step_started').map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(only(run, 'step_failed').map((e) => [e.attempt, e.will_retry, e.error.code, e.error.retryable])).toEqual([
      [1, true, 'flaky', true],
      [2, true, 'flaky', true],
    ]);
    expect(clock.slept).toEqual([10, 20]);
  });

  it('fails the run with the last step_failed error once attempts are exhausted', async () => {
    const { registry, calls } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [
      { id: 'f', tool: 'test/flaky', args: { key: 'k', times: 5 }, retry: { max_attempts: 2 } },
      { id: 'never', tool: 'test/echo' },
    ]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('failed');
    expect(run.output).toBeUndefined();
    const failed = only(run, 'step_failed');
    expect(failed.map((e) => e.will_retry)).toEqual([true, false]);
    expect(only(run, 'run_finished')[0]!.error).toEqual({ ...failed[1]!.error, step: 'f' });
    expect(calls['test/echo']).toBeUndefined();
    expect((await engine.listRuns())[0]).toMatchObject({ status: 'failed', error: { code: 'flaky', step: 'f' } });
  });

  it('turns a plain throw into tool_error (retryable) and keeps a tool FlowError code', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 't', tool: 'test/throw', args: { message: 'kaput' }, retry: { max_attempts: 2 } }]) });
    expect(only(run, 'step_failed').map((e) => e.error)).toEqual([
      { code: 'tool_error', message: 'kaput', retryable: true },
      { code: 'tool_error', message: 'kaput', retryable: true },
    ]);
  });

  it('times a step out with step_timeout (retryable), even when the tool ignores its signal', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    // test/hang never settles and ignores its signal: only the step timeout can end the attempt.
    const spec = makeSpec(registry, [{ id: 's', tool: 'test/hang', timeout_ms: 30, retry: { max_attempts: 2 } }]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('failed');
    expect(only(run, 'step_failed').map((e) => [e.error.code, e.error.retryable, e.will_retry])).toEqual([
      ['step_timeout', true, true],
      ['step_timeout', true, false],
    ]);
  });

  it('aborts ctx.signal on timeout', async () => {
    const { registry, aborted } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 's', tool: 'test/hang', args: { honour_signal: true }, timeout_ms: 30 }]);
    const run = await engine.run({ spec });
    expect(only(run, 'step_failed')[0]!.error.code).toBe('step_timeout');
    // The tool saw the abort, with the timeout as its reason.
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toMatchObject({ code: 'step_timeout' });
  });

  it('fails output that breaks the contract with output_contract_violation', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'b', tool: 'test/bad-output' }]) });
    expect(only(run, 'step_failed')[0]!.error).toMatchObject({ code: 'output_contract_violation', retryable: false });
  });

  it('fails an unknown tool and a contract digest that differs from the pin', async () => {
    const { registry } = testTools();
    const other = testTools().registry;
    const spec = makeSpec(registry, [{ id: 'e', tool: 'test/echo' }]);
    const { engine } = testEngine(registry);

    const missing = { ...spec, steps: [{ ...spec.steps[0]!, tool: { ...spec.steps[0]!.tool, ref: 'test/nope' } }] };
    const run1 = await engine.run({ spec: missing });
    expect(events(run1)).toEqual(['run_started', 'step_started:e', 'step_failed:e', 'run_finished']);
    expect(only(run1, 'step_failed')[0]!.error).toMatchObject({ code: 'unknown_tool', retryable: false });

    const pinned = { ...spec, steps: [{ ...spec.steps[0]!, tool: { ...spec.steps[0]!.tool, contract_digest: digestOf('another contract') } }] };
    const run2 = await testEngine(other).engine.run({ spec: pinned });
    expect(only(run2, 'step_failed')[0]!.error.code).toBe('tool_contract_mismatch');
  });

  it('never lets a tool crash the host, and disposes run resources on success and failure', async () => {
    const { registry, disposed } = testTools();
    const { engine } = testEngine(registry);
    await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/scoped', args: { key: 'browser' } }]) });
    expect(disposed).toEqual(['browser']);
    const failing = makeSpec(registry, [
      { id: 'a', tool: 'test/scoped', args: { key: 'ctx' } },
      { id: 'b', tool: 'test/throw', args: { message: 'x' } },
    ]);
    const run = await engine.run({ spec: failing });
    expect(run.status).toBe('failed');
    expect(disposed).toEqual(['browser', 'ctx']);
  });
});

describe('engine: effects, warnings, confirmation', () => {
  it('journals effects with derived, stable idempotency keys and the step warnings', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'fx', tool: 'test/effects', args: { hosts: ['a.test', 'b.test'], key: 'mine' } }]);
    const run = await engine.run({ spec });
    const effects = only(run, 'effect_recorded');
    expect(effects.map((e) => [e.effect.kind, e.effect.target])).toEqual([
      ['net', 'a.test'],
      ['net', 'b.test'],
      ['fs', 'out.txt'],
    ]);
    expect(effects[0]!.effect.idempotency_key).toBe(
      digestOf({ inputs_digest: run.journal[0]!.inputs_digest, step: 'fx', index: 0, kind: 'net', target: 'a.test' }),
    );
    expect(effects[2]!.effect.idempotency_key).toBe('mine');
    expect(only(run, 'step_succeeded')[0]!.warnings).toEqual([{ code: 'drift', message: 'a locator drifted' }]);
    const again = await engine.run({ spec });
    expect(only(again, 'effect_recorded').map((e) => e.effect.idempotency_key)).toEqual(effects.map((e) => e.effect.idempotency_key));
  });

  it('asks once before the first outward step; "no" cancels before any outward step runs', async () => {
    const { registry, calls } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [
      { id: 'pure', tool: 'test/echo' },
      { id: 'net1', tool: 'test/effects', args: { hosts: ['api.test'] } },
      { id: 'net2', tool: 'test/effects', args: { hosts: ['api.test'] } },
    ]);
    const asked: EffectSummary[] = [];
    const run = await engine.run({ spec }, {}, { confirm: async (s) => (asked.push(s), false) });
    expect(run.status).toBe('canceled');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.steps.map((s) => s.step)).toEqual(['net1', 'net2']);
    expect(calls['test/effects']).toBeUndefined();
    expect(calls['test/echo']).toBe(1);
    expect(only(run, 'run_finished')[0]).toMatchObject({ status: 'canceled', error: { code: 'effects_not_confirmed' } });

    const yes = await engine.run({ spec }, {}, { confirm: async () => (asked.push({} as EffectSummary), true) });
    expect(yes.status).toBe('succeeded');
    expect(asked).toHaveLength(2);
    expect(calls['test/effects']).toBe(2);
  });

  it('never asks for a pure flow', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    let asked = 0;
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/echo' }]) }, {}, { confirm: async () => (asked++, false) });
    expect(run.status).toBe('succeeded');
    expect(asked).toBe(0);
  });

  it('summarizes outward effects from capabilities and static arguments', () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(
      registry,
      [
        { id: 'p', tool: 'test/echo' },
        { id: 'n', tool: 'test/effects', args: { url: 'https://api.example:8443/x?y=${inputs.q}', path: 'out/${inputs.q}.txt' } },
      ],
      { inputs: { q: { type: 'string' } } },
    );
    expect(engine.summarizeEffects(spec, { q: 'z' })).toEqual({
      outward: true,
      steps: [{ step: 'n', tool: 'test/effects@1.0.0', capabilities: ['net', 'fs'], targets: ['api.example:8443', 'out/z.txt'] }],
      net_hosts: ['api.example:8443'],
      fs_writes: ['out/z.txt'],
      spawns: [],
      browser: false,
    });
  });
});

describe('engine: async runs, watch, cancellation, executors', () => {
  it('start returns at once; watch follows the journal to run_finished', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [
      { id: 'a', tool: 'test/slow', args: { ms: 20 } },
      { id: 'b', tool: 'test/echo' },
    ]);
    const started = await engine.start({ spec });
    expect(started.status).toBe('pending');
    const seen: string[] = [];
    for await (const e of engine.watch(started.run_id)) seen.push(e.event);
    expect(seen).toEqual(['run_started', 'step_started', 'step_succeeded', 'step_started', 'step_succeeded', 'run_finished']);
    expect((await engine.getRun(started.run_id))!.status).toBe('succeeded');
  });

  it('cancels a run when its signal aborts', async () => {
    const { registry, calls } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [
      { id: 'slow', tool: 'test/slow', args: { ms: 10_000, honour_signal: true } },
      { id: 'after', tool: 'test/echo' },
    ]);
    const controller = new AbortController();
    const running = engine.run({ spec }, {}, { signal: controller.signal, onEntry: (e) => e.event === 'step_started' && controller.abort() });
    const run = await running;
    expect(run.status).toBe('canceled');
    expect(only(run, 'step_failed')[0]!.error.code).toBe('canceled');
    expect(calls['test/echo']).toBeUndefined();
  });

  it('routes the tools an executor accepts through it and records the provider', async () => {
    const { registry } = testTools();
    const executed: string[] = [];
    const executor: Executor = {
      name: 'fake-sandbox',
      accepts: (tool) => tool.contract.ref === 'test/effects',
      async execute(tool, input, ctx) {
        executed.push(tool.contract.ref);
        return tool.run(input, ctx);
      },
    };
    const { engine } = testEngine(registry, { executor });
    const run = await engine.run({
      spec: makeSpec(registry, [
        { id: 'a', tool: 'test/echo' },
        { id: 'b', tool: 'test/effects', args: { hosts: [] } },
      ]),
    });
    expect(only(run, 'step_started').map((e) => e.provider)).toEqual(['in-process', 'fake-sandbox']);
    expect(executed).toEqual(['test/effects']);
  });
});

describe('engine: inputs, Run schema, deploys, lifecycle', () => {
  it('rejects inputs that break the contract with every issue listed, before any run exists', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/echo' }], {
      inputs: { count: { type: 'integer', required: true }, label: { type: 'string' }, token: { type: 'string', secret: true } },
    });
    const err = await rejection(engine.run({ spec }, { label: 7, token: 'plain-secret-value', bogus: 1 }));
    expect(isFlowError(err, 'invalid_inputs')).toBe(true);
    expect(err.data.issues).toEqual([
      { path: 'bogus', message: 'is not a declared input of flow "test-flow"' },
      { path: 'count', message: 'is required' },
      { path: 'label', message: 'must be string' },
      { path: 'token', message: 'is a secret input: pass a reference secret:<name>, never the value itself' },
    ]);
    expect(err.message).not.toContain('plain-secret-value');
    expect(await engine.listRuns()).toEqual([]);
  });

  it('returns only strict Runs: the schema rejects any extra field', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/echo' }]) });
    expect(Object.keys(run).sort()).toEqual(['finished_at', 'flow_digest', 'id', 'journal', 'started_at', 'status']);
    expect(() => parseRun({ ...run, extra: 1 })).toThrow(/extra/);
    expect(() => parseRun({ ...run, journal: [{ ...run.journal[0], extra: true }] })).toThrow();
    expect(() => parseRun({ ...run, id: 'not-a-uuid' })).toThrow();
    expect(() => parseRun({ ...run, status: 'done' })).toThrow();
    const { journal: _j, ...noJournal } = run;
    expect(() => parseRun(noJournal)).toThrow();
  });

  it('deploys under a name per front and runs by name or digest', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/echo' }], { name: 'hello' });
    const digest = await engine.deploy('hello', spec);
    expect(digest).toBe(digestOf(spec));
    expect((await engine.run({ name: 'hello' })).flow_digest).toBe(digest);
    expect((await engine.run({ digest })).status).toBe('succeeded');
    expect(await engine.resolve({ name: 'hello', front: 'mcp' })).toBeUndefined();
    expect((await rejection(engine.run({ name: 'nope' }))).code).toBe('not_found');
    expect((await rejection(engine.deploy('bad', { flowspec: 2 } as never))).code).toBe('invalid_spec');
  });

  it('lists runs newest first and reads them by id', async () => {
    const { registry } = testTools();
    const { engine } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/echo' }]);
    const a = await engine.run({ spec });
    const b = await engine.run({ spec });
    expect((await engine.listRuns()).map((r) => r.id)).toEqual([b.id, a.id]);
    expect(await engine.getRun(a.id)).toEqual(a);
    expect(await engine.getRun('00000000-0000-4000-8000-00000000ffff')).toBeUndefined();
  });

  it('logs run outcomes, and dispose waits for runs, disposes storage once and closes the engine', async () => {
    const { registry } = testTools();
    const storage = createMemoryStorage();
    let disposals = 0;
    storage.dispose = async () => void disposals++;
    const logger = recordingLogger();
    const { engine } = testEngine(registry, { storage, logger });
    const spec = makeSpec(registry, [{ id: 'slow', tool: 'test/slow', args: { ms: 10_000, honour_signal: true } }]);
    const { run_id } = await engine.start({ spec });
    await engine.dispose();
    await engine.dispose();
    expect(disposals).toBe(1);
    expect(logger.lines.some((l) => l.message.includes(`run ${run_id} canceled`))).toBe(true);
    expect((await rejection(engine.run({ spec }))).code).toBe('engine_disposed');
  });
});
