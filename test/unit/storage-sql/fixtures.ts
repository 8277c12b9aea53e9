import { randomUUID } from 'node:crypto';
import { digestOf, type Digest } from '../../../src/canonical.js';
import type { RunRecord } from '../../../src/ports/storage.js';
import { entryDigest } from '../../../src/run/journal.js';
import type { JournalEntry } from '../../../src/run/types.js';

export const FLOW_DIGEST = `sha256:${'ab'.repeat(32)}` as Digest;
export const INPUTS_DIGEST = digestOf({});

export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: randomUUID(),
    flow_digest: FLOW_DIGEST,
    flow_name: 'hello',
    status: 'running',
    started_at: '2026-11-05T10:00:00.000Z',
    ...overrides,
  };
}

/** Entry `seq` of a journal whose previous entry has digest `prev`. The last of `total` is run_finished. */
export function journalEntry(seq: number, prev: Digest | null, last: boolean, extra: Record<string, unknown> = {}): JournalEntry {
  const base = { at: `2026-11-05T10:00:${String(seq % 60).padStart(2, '0')}.000Z`, flow_digest: FLOW_DIGEST, inputs_digest: INPUTS_DIGEST, seq, prev };
  const body =
    seq === 0
      ? { ...base, event: 'run_started' as const, flow_name: 'hello', inputs: {}, contracts: [], ...extra }
      : last
        ? { ...base, event: 'run_finished' as const, status: 'succeeded' as const, output: { n: seq }, ...extra }
        : { ...base, event: 'step_skipped' as const, step: `s${seq}`, reason: 'test', ...extra };
  return { ...body, digest: entryDigest(body as JournalEntry) } as JournalEntry;
}

/** A valid hash-chained journal of `count` entries ending with run_finished. */
export function journal(count: number): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (let seq = 0; seq < count; seq++) out.push(journalEntry(seq, seq === 0 ? null : out[seq - 1].digest, seq === count - 1));
  return out;
}

/** Problems of a journal: gaps, broken prev links, wrong digests. Empty when it is sound. */
export function chainProblems(entries: readonly JournalEntry[]): string[] {
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    if (entry.seq !== i) problems.push(`entry ${i} has seq ${entry.seq}`);
    const prev = i === 0 ? null : entries[i - 1].digest;
    if (entry.prev !== prev) problems.push(`entry ${i}: prev ${entry.prev} != ${prev}`);
    if (entry.digest !== entryDigest(entry)) problems.push(`entry ${i}: digest does not match its content`);
  });
  return problems;
}
