import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import { FlowError, isFlowError } from '../../../src/errors.js';
import { readJournalFixture, writeJournalFixture } from '../../../src/run/fixture.js';
import { sealEntry } from '../../../src/run/journal.js';
import type { JournalEntry, Run } from '../../../src/run/types.js';
import { makeSpec, testEngine, testTools } from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<FlowError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FlowError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Re-seal a journal after editing it, so only the edit (not the chain) is wrong. */
function rechain(journal: JournalEntry[]): JournalEntry[] {
  const out: JournalEntry[] = [];
  journal.forEach((e, seq) => {
    const { digest: _d, ...rest } = e;
    out.push(sealEntry({ ...rest, seq, prev: seq === 0 ? null : out[seq - 1]!.digest } as never));
  });
  return out;
}

/** What must match between a run and its replay: everything but time, chain links and replay_of. */
const semantic = (run: Run) =>
  run.journal.slice(1).map((e) => {
    const { at: _a, prev: _p, digest: _d, ...rest } = e;
    return rest;
  });

function setup() {
  const t = testTools();
  const { engine } = testEngine(t.registry);
  const spec = makeSpec(
    t.registry,
    [
      { id: 'first', tool: 'test/echo', args: { word: '${inputs.word}' } },
      { id: 'flaky', tool: 'test/flaky', args: { key: '${steps.first.output.word}', times: 1 }, retry: { max_attempts: 2 } },
      { id: 'fx', tool: 'test/effects', args: { hosts: ['api.test'] } },
      { id: 'skipped', tool: 'test/echo', if: 'inputs.word == "skip-me-not"' },
    ],
    { inputs: { word: { type: 'string', required: true } }, output: { word: '${steps.flaky.output.key}' } },
  );
  return { ...t, engine, spec };
}

describe('replay', () => {
  it('hermetic (default): answers every call from the journal, runs no tool, asks nobody', async () => {
    const { engine, spec, calls } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const before = { ...calls };
    let asked = 0;
    const replay = await engine.replay({ run_id: run.id }, { confirm: async () => (asked++, true) });
    expect(calls).toEqual(before);
    expect(asked).toBe(0);
    expect(replay.id).not.toBe(run.id);
    expect(replay.status).toBe('succeeded');
    expect(replay.output).toEqual(run.output);
    expect(replay.journal[0]).toMatchObject({ event: 'run_started', replay_of: { run_id: run.id, mode: 'hermetic' } });
    expect(semantic(replay)).toEqual(semantic(run));
    expect((await engine.listRuns())[0]!).toMatchObject({ id: replay.id, replay_of: run.id });
  });

  it('verify: reproduces success and failure runs entry for entry', async () => {
    const { engine, spec, registry } = setup();
    const ok = await engine.run({ spec }, { word: 'hi' });
    const verified = await engine.replay({ run_id: ok.id }, { mode: 'verify' });
    expect(verified.status).toBe('succeeded');
    expect(semantic(verified)).toEqual(semantic(ok));

    const failing = makeSpec(registry, [{ id: 't', tool: 'test/throw', args: { message: 'no' }, retry: { max_attempts: 2 } }]);
    const failed = await engine.run({ spec: failing });
    const replayed = await engine.replay({ run_id: failed.id }, { mode: 'verify' });
    expect(replayed.status).toBe('failed');
    expect(semantic(replayed)).toEqual(semantic(failed));
  });

  it('verify: a changed output (chain re-sealed) diverges at that entry, on output_digest', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const seq = run.journal.findIndex((e) => e.event === 'step_succeeded');
    const journal = rechain(run.journal.map((e) => (e.seq === seq ? ({ ...e, output: { word: 'HACKED' } } as JournalEntry) : e)));
    const err = await rejection(engine.replay({ journal, run_id: run.id }, { mode: 'verify', spec }));
    expect(err.code).toBe('replay_divergence');
    expect(err.data).toEqual({
      seq,
      step: 'first',
      field: 'output_digest',
      expected: (run.journal[seq] as { output_digest: string }).output_digest,
      actual: digestOf({ word: 'HACKED' }),
    });
    expect(err.toJSON()).toMatchObject({ code: 'replay_divergence', message: expect.stringContaining(`seq ${seq}`) });
    // Hermetic replay does not check digests: it answers with what was recorded.
    expect((await engine.replay({ journal, run_id: run.id }, { spec })).status).toBe('succeeded');
  });

  it('verify: a consistent forgery (output and its digest) diverges where the replay recomputes from it', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const seq = run.journal.findIndex((e) => e.event === 'step_succeeded');
    const forged = { word: 'bye' };
    const journal = rechain(run.journal.map((e) => (e.seq === seq ? ({ ...e, output: forged, output_digest: digestOf(forged) } as JournalEntry) : e)));
    const err = await rejection(engine.replay({ journal }, { mode: 'verify', spec }));
    expect(err.code).toBe('replay_divergence');
    // The next step's input is recomputed from the forged output and no longer matches the recording.
    expect(err.data).toMatchObject({ seq: seq + 1, step: 'flaky', field: 'input_digest' });
  });

  it('verify: reordered, removed and tampered entries and another FlowSpec are refused with stable codes', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const j = run.journal;

    const swapped = [...j];
    [swapped[3], swapped[4]] = [swapped[4]!, swapped[3]!];
    expect((await rejection(engine.replay({ journal: swapped }, { mode: 'verify', spec }))).data).toMatchObject({ seq: 3, field: 'seq' });
    expect((await rejection(engine.replay({ journal: swapped }, { mode: 'verify', spec }))).code).toBe('journal_sequence');

    const removed = j.filter((e) => e.seq !== 2);
    const rm = await rejection(engine.replay({ journal: removed }, { mode: 'verify', spec }));
    expect([rm.code, (rm.data as { seq: number }).seq]).toEqual(['journal_sequence', 2]);

    const tampered = j.map((e) => (e.seq === 4 ? ({ ...e, error: { code: 'x', message: 'y', retryable: false } } as JournalEntry) : e));
    const tp = await rejection(engine.replay({ journal: tampered }, { mode: 'verify', spec }));
    expect([tp.code, (tp.data as { seq: number }).seq, (tp.data as { field: string }).field]).toEqual(['journal_chain_broken', 4, 'digest']);

    const relinked = j.map((e) => (e.seq === 5 ? ({ ...e, prev: j[0]!.digest } as JournalEntry) : e));
    const rl = await rejection(engine.replay({ journal: relinked }, { mode: 'verify', spec }));
    expect([rl.code, (rl.data as { seq: number }).seq, (rl.data as { field: string }).field]).toEqual(['journal_chain_broken', 5, 'prev']);

    const other = { ...spec, name: 'another-flow' };
    const fd = await rejection(engine.replay({ journal: j }, { mode: 'verify', spec: other }));
    expect([fd.code, (fd.data as { seq: number }).seq]).toEqual(['flow_digest_mismatch', 0]);
    // Refused in every mode, before any replay run exists.
    expect((await rejection(engine.replay({ journal: j }, { spec: other }))).code).toBe('flow_digest_mismatch');
    expect((await engine.listRuns()).length).toBe(1);
  });

  it('hermetic: a journal that has no answer for a step is a divergence, and the replay run is closed as failed', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const truncated = run.journal.slice(0, 3);
    const err = await rejection(engine.replay({ journal: truncated }, { spec }));
    expect(err.code).toBe('replay_divergence');
    expect(err.data).toMatchObject({ seq: 3, step: 'flaky', field: 'event', expected: null });
    const [latest] = await engine.listRuns();
    expect(latest).toMatchObject({ status: 'failed', error: { code: 'replay_divergence' } });
  });

  it('rerun: executes the tools again under the same confirmation rule', async () => {
    const { engine, spec, calls } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const before = calls['test/effects'];
    let asked = 0;
    const refused = await engine.replay({ run_id: run.id }, { mode: 'rerun', confirm: async () => (asked++, false) });
    expect(refused.status).toBe('canceled');
    expect(calls['test/effects']).toBe(before);
    const rerun = await engine.replay({ run_id: run.id }, { mode: 'rerun', confirm: async () => (asked++, true) });
    expect(asked).toBe(2);
    expect(rerun.status).toBe('succeeded');
    expect(calls['test/effects']).toBe(before! + 1);
    expect(rerun.journal[0]).toMatchObject({ replay_of: { run_id: run.id, mode: 'rerun' } });
  });

  it('replays a run that was canceled at the confirmation, without asking', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' }, { confirm: async () => false });
    expect(run.status).toBe('canceled');
    const replay = await engine.replay({ run_id: run.id }, { mode: 'verify' });
    expect(replay.status).toBe('canceled');
    expect(semantic(replay)).toEqual(semantic(run));
  });

  it('finds the spec of a bare journal in storage, or asks for it', async () => {
    const { engine, spec, registry } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const replay = await engine.replay({ journal: run.journal }, { mode: 'verify' });
    expect(replay.journal[0]).toMatchObject({ replay_of: { run_id: run.journal[0]!.digest, mode: 'verify' } });
    const fresh = testEngine(registry).engine;
    expect((await rejection(fresh.replay({ journal: run.journal }))).code).toBe('not_found');
    expect((await fresh.replay({ journal: run.journal }, { spec, mode: 'verify' })).status).toBe('succeeded');
    expect((await rejection(fresh.replay({ run_id: '00000000-0000-4000-8000-00000000ffff' }))).code).toBe('not_found');
    expect((await rejection(fresh.replay({ journal: [] }, { spec }))).code).toBe('journal_sequence');
    expect((await rejection(fresh.replay({ journal: [{ event: 'nope' }] as never }, { spec }))).code).toBe('invalid_journal');
    expect((await rejection(fresh.replay({ run_id: run.id }, { mode: 'fast' as never }))).code).toBe('invalid_replay_mode');
  });
});

describe('journal fixtures', () => {
  it('round-trip: written pretty with sorted keys, read back strictly, and replayable', async () => {
    const { engine, spec, registry } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const text = writeJournalFixture(run, spec);
    expect(text.startsWith('{\n  "flow_digest"')).toBe(true);
    const fixture = readJournalFixture(text);
    expect(fixture).toEqual({ format: 'flowctl-journal/1', flow_digest: run.flow_digest, spec, run });
    const fresh = testEngine(registry).engine;
    const replay = await fresh.replay({ journal: fixture.run.journal, run_id: fixture.run.id }, { spec: fixture.spec, mode: 'verify' });
    expect(replay.output).toEqual(run.output);
    expect(() => writeJournalFixture(run, { ...spec, name: 'x' })).toThrow(/not the given spec/);
  });

  it('rejects malformed fixture files with clear errors', async () => {
    const { engine, spec } = setup();
    const run = await engine.run({ spec }, { word: 'hi' });
    const good = JSON.parse(writeJournalFixture(run, spec));
    const code = (text: string) => {
      try {
        readJournalFixture(text);
      } catch (err) {
        return isFlowError(err) ? `${err.code}: ${err.message}` : String(err);
      }
      return 'ok';
    };
    expect(code('{')).toMatch(/^invalid_fixture: \[flowctl\] \[fixture\] not JSON/);
    expect(code('[]')).toMatch(/^invalid_fixture: .*JSON object/);
    expect(code(JSON.stringify({ ...good, format: 'flowctl-journal/9' }))).toMatch(/format is "flowctl-journal\/9"/);
    expect(code(JSON.stringify({ ...good, extra: 1 }))).toMatch(/unknown field\(s\) extra/);
    expect(code(JSON.stringify({ ...good, flow_digest: 'md5:1' }))).toMatch(/flow_digest is not/);
    expect(code(JSON.stringify({ ...good, spec: { steps: [] } }))).toMatch(/spec is not a FlowSpec/);
    expect(code(JSON.stringify({ ...good, run: { ...good.run, extra: true } }))).toMatch(/^invalid_run: /);
    expect(code(JSON.stringify(good))).toBe('ok');
  });
});
