import { createHash } from 'node:crypto';
import stringify from 'fast-json-stable-stringify';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sampleJournal } from '../../../testing/conformance-fixtures.js';
import { assertFlowSpec } from '../../../src/engine/spec-guard.js';
import { isFlowError } from '../../../src/errors.js';
import { entryDigest, sealEntry, sealEntryText } from '../../../src/run/journal.js';
import { compareEntries } from '../../../src/run/recorded-source.js';
import { createVerifyCheck } from '../../../src/run/replay.js';
import type { JournalEntry } from '../../../src/run/types.js';

// The fast paths of sealing and of the verify check (docs/journal.md, "Replay"): each must give
// exactly what the general path gives. The reference is the plain definition: sha256 over the
// key-sorted JSON (fast-json-stable-stringify) of the entry without `at` and `digest`.
const reference = (entry: Record<string, unknown>) => {
  const { at: _at, digest: _digest, ...rest } = entry;
  const text = stringify(rest);
  return { text, digest: `sha256:${createHash('sha256').update(text).digest('hex')}` };
};

const SEALED_AT = '2026-01-01T00:00:00.000Z';
const base = {
  at: SEALED_AT,
  flow_digest: sampleJournal(1)[0]!.flow_digest,
  inputs_digest: sampleJournal(1)[0]!.inputs_digest,
  seq: 1,
  prev: sampleJournal(1)[0]!.digest,
};

describe('sealing', () => {
  it('gives the reference digest and text for any JSON in outputs, in any key order (integer-like keys too)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.oneof(fc.string(), fc.nat().map(String)), fc.jsonValue(), { maxKeys: 6 }), (output, extra) => {
        const draft = { ...base, event: 'step_succeeded', step: 's', attempt: 1, output: { ...extra, value: output }, output_digest: base.prev };
        const { entry, text } = sealEntryText(draft as never);
        const ref = reference(draft);
        expect(entry.digest).toBe(ref.digest);
        expect(entryDigest(entry)).toBe(ref.digest);
        // The text is the sealed entry: `at` and `digest` first, then the reference body.
        expect(text).toBe(`{"at":${JSON.stringify(SEALED_AT)},"digest":"${ref.digest}",${ref.text.slice(1)}`);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(entry)));
      }),
      { numRuns: 300 },
    );
  });

  it('gives the reference for members it does not know, in their sorted order', () => {
    const draft = { ...base, event: 'step_skipped', step: 's', reason: 'r', zeta: { b: 1, a: [{ d: 1, c: 2 }] }, '10': 1, '9': 2 };
    const { entry, text } = sealEntryText(draft as never);
    expect(entry.digest).toBe(reference(draft).digest);
    expect(text.endsWith(`${reference(draft).text.slice(1)}`)).toBe(true);
  });
});

describe('verify check', () => {
  const journal = sampleJournal(6, true);
  // A replay's entries: the same content, another chain (its run_started names the original run).
  const replayed = (() => {
    const out: JournalEntry[] = [];
    journal.forEach((e, seq) => {
      const { digest: _d, ...rest } = e;
      const changed = seq === 0 ? { ...rest, replay_of: { run_id: 'r', mode: 'verify' } } : rest;
      out.push(sealEntry({ ...changed, at: '2030-01-01T00:00:00.000Z', prev: seq === 0 ? null : out[seq - 1]!.digest } as never));
    });
    return out;
  })();
  const failure = (check: (e: JournalEntry) => void, entries: JournalEntry[]) => {
    try {
      for (const e of entries) check(e);
      return undefined;
    } catch (err) {
      if (isFlowError(err)) return err;
      throw err;
    }
  };

  it('passes a replay whose entries differ only in time and chain, though every digest differs', () => {
    expect(replayed.every((e, i) => e.digest !== journal[i]!.digest)).toBe(true);
    expect(failure(createVerifyCheck(journal), replayed)).toBeUndefined();
  });

  it('still ignores what compareEntries ignores (a recorded duration_ms), and names any other difference as compareEntries does', () => {
    // (The check reads the recorded entries as planReplay left them: content, not digests, counts.)
    const timed = journal.map((e) => (e.event === 'step_skipped' ? ({ ...e, duration_ms: 12 } as JournalEntry) : e));
    expect(timed.filter((e) => 'duration_ms' in e)).toHaveLength(4);
    expect(failure(createVerifyCheck(timed), replayed)).toBeUndefined();
    for (const [i, edit] of [
      [2, (e: JournalEntry) => ({ ...e, reason: 'edited' })],
      [3, (e: JournalEntry) => ({ ...e, extra: { nested: [1, 2] } })],
      [
        4,
        (e: JournalEntry) => {
          const { step: _s, ...rest } = e as JournalEntry & { step: string };
          return rest;
        },
      ],
    ] as const) {
      const edited = replayed.map((e, seq) => (seq === i ? (edit(e) as JournalEntry) : e));
      const err = failure(createVerifyCheck(journal), edited);
      expect(err, `edit at ${i}`).toBeDefined();
      expect(err!.code).toBe('replay_divergence');
      expect(err!.data).toEqual(compareEntries(journal[i], edited[i]!)!.data);
    }
  });

  it('reports a replay entry the recording does not have', () => {
    const extra = { ...replayed[5]!, seq: 6 } as JournalEntry;
    expect(failure(createVerifyCheck(journal), [...replayed, extra])?.data).toMatchObject({ seq: 6, field: 'event', expected: null });
  });
});

describe('FlowSpec guard', () => {
  it('names the first step id that appears twice', () => {
    const step = (id: string) => ({
      id,
      tool: { ref: 't/x', version: '1.0.0', contract_digest: base.prev },
      capabilities: [],
      args: {},
      retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 1 },
      timeout_ms: 1000,
    });
    const spec = (ids: string[]) => ({ flowspec: 1, name: 'f', inputs: {}, steps: ids.map(step) });
    expect(() => assertFlowSpec(spec(['a', 'b', 'c']))).not.toThrow();
    expect(() => assertFlowSpec(spec(['a', 'b', 'c', 'b', 'a']))).toThrow(/step id "b" appears twice/);
    expect(() => assertFlowSpec(spec(Array.from({ length: 2000 }, (_, i) => `s${i % 1999}`)))).toThrow(/step id "s0" appears twice/);
  });
});
