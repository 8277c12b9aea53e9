import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestOf } from '../../../src/canonical.js';
import { createEngine } from '../../../src/engine/engine.js';
import { createFixedClock, createSequentialIds } from '../../../src/engine/deterministic.js';
import { isFlowError } from '../../../src/errors.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { readJournalFixture } from '../../../src/run/fixture.js';
import { sealEntry } from '../../../src/run/journal.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

const DIR = resolve(import.meta.dirname, '../../fixtures/journals');
const FILES = readdirSync(DIR)
  .filter((f) => /^\d\d-.*\.json$/.test(f))
  .sort();

// No tools at all: hermetic and verify replays must never need one.
const engine = () => createEngine({ storage: createMemoryStorage(), tools: createToolRegistry(), clock: createFixedClock(), ids: createSequentialIds() });

function rechain(journal: JournalEntry[]): JournalEntry[] {
  const out: JournalEntry[] = [];
  journal.forEach((e, seq) => {
    const { digest: _d, ...rest } = e;
    out.push(sealEntry({ ...rest, seq, prev: seq === 0 ? null : out[seq - 1]!.digest } as never));
  });
  return out;
}

async function failure(journal: JournalEntry[], spec: FlowSpec): Promise<{ code: string; seq: number; field: string }> {
  try {
    await engine().replay({ journal }, { mode: 'verify', spec });
  } catch (err) {
    if (!isFlowError(err)) throw err;
    const data = err.data as { seq: number; field: string };
    expect(err.toJSON()).toMatchObject({ code: err.code, message: expect.stringMatching(/^\[flowctl\] \[replay\] /) });
    return { code: err.code, seq: data.seq, field: data.field };
  }
  throw new Error('the mutated journal replayed without an error');
}

describe('golden journal corpus', () => {
  it('holds at least 10 fixtures covering success, failure, retries, skips, effects, secrets', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(10);
    const all = FILES.map((f) => readJournalFixture(readFileSync(join(DIR, f), 'utf8')).run);
    const events = new Set(all.flatMap((r) => r.journal.map((e) => e.event)));
    expect([...events].sort()).toEqual(['effect_recorded', 'run_finished', 'run_started', 'step_failed', 'step_skipped', 'step_started', 'step_succeeded']);
    expect(new Set(all.map((r) => r.status))).toEqual(new Set(['succeeded', 'failed', 'canceled']));
    expect(all.some((r) => r.journal.some((e) => e.event === 'step_failed' && e.will_retry))).toBe(true);
    expect(all.some((r) => JSON.stringify(r).includes('***'))).toBe(true);
    expect(new Set(all.flatMap((r) => r.journal.flatMap((e) => (e.event === 'effect_recorded' ? [e.effect.kind] : []))))).toEqual(
      new Set(['net', 'fs', 'spawn']),
    );
  });

  describe.each(FILES)('%s', (file) => {
    const fixture = readJournalFixture(readFileSync(join(DIR, file), 'utf8'));
    const { spec, run } = fixture;
    const j = run.journal;

    it('replays with verify (no tools) to the same status, output and entries', async () => {
      const replay = await engine().replay({ journal: j, run_id: run.id }, { mode: 'verify', spec });
      expect(replay.status).toBe(run.status);
      expect(replay.output).toEqual(run.output);
      expect(replay.journal[0]).toMatchObject({ replay_of: { run_id: run.id, mode: 'verify' } });
      const strip = (e: JournalEntry) => {
        const { at: _a, prev: _p, digest: _d, ...rest } = e;
        return rest;
      };
      expect(replay.journal.slice(1).map(strip)).toEqual(j.slice(1).map(strip));
      expect((await engine().replay({ journal: j }, { spec })).status).toBe(run.status);
    });

    it('changed output (chain re-sealed): replay_divergence at that entry', async () => {
      // The first step output, whose digest the replay recomputes; a run without one (it failed or was
      // canceled before any step succeeded) has its final result changed instead.
      let seq = j.findIndex((e) => e.event === 'step_succeeded');
      let changed: JournalEntry;
      let field: string;
      if (seq >= 0) {
        changed = { ...j[seq]!, output: { mutated: true } } as JournalEntry;
        field = 'output_digest';
      } else {
        seq = j.length - 1;
        const last = j[seq] as Extract<JournalEntry, { event: 'run_finished' }>;
        changed = { ...last, error: { ...last.error!, message: 'mutated' } };
        field = 'error';
      }
      expect(await failure(rechain(j.map((e) => (e.seq === seq ? changed : e))), spec)).toEqual({ code: 'replay_divergence', seq, field });
    });

    it('reordered entries: journal_sequence at the first moved seq', async () => {
      const swapped = [...j];
      [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
      expect(await failure(swapped, spec)).toEqual({ code: 'journal_sequence', seq: 1, field: 'seq' });
    });

    it('broken hash chain: journal_chain_broken at the edited entry', async () => {
      const k = Math.floor(j.length / 2);
      const edited = j.map((e) => (e.seq === k ? ({ ...e, inputs_digest: digestOf('forged') } as JournalEntry) : e));
      expect(await failure(edited, spec)).toEqual({ code: 'journal_chain_broken', seq: k, field: 'digest' });
      const relinked = j.map((e) => (e.seq === k ? ({ ...e, prev: digestOf('elsewhere') } as JournalEntry) : e));
      expect(await failure(relinked, spec)).toEqual({ code: 'journal_chain_broken', seq: k, field: 'prev' });
    });

    it('removed entry: journal_sequence at its seq (a divergence there once renumbered and re-sealed)', async () => {
      const k = Math.max(1, Math.floor(j.length / 2));
      expect(
        await failure(
          j.filter((e) => e.seq !== k),
          spec,
        ),
      ).toEqual({ code: 'journal_sequence', seq: k, field: 'seq' });
      // A forger who renumbers and re-seals still cannot drop a step attempt: the replay makes one there.
      const started = j.findIndex((e) => e.event === 'step_started');
      if (started < 0) return;
      expect(await failure(rechain(j.filter((e) => e.seq !== started)), spec)).toEqual({ code: 'replay_divergence', seq: started, field: 'event' });
    });

    it('different flow digest: flow_digest_mismatch at seq 0', async () => {
      expect(await failure(j, { ...spec, name: `${spec.name}-changed` })).toEqual({ code: 'flow_digest_mismatch', seq: 0, field: 'flow_digest' });
      expect(fixture.flow_digest).toBe(digestOf(spec));
    });
  });
});
