import { deepFreeze, digestOf, inCanonicalForm, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { JournalEntry } from './types.js';

/**
 * Journal entries and their hash chain. See docs/journal.md.
 *
 * digest = digestOf(entry without `at` and `digest`); prev = the previous entry's digest (null at
 * seq 0). The run's own id never enters an entry, so two equal runs have identical chains.
 */

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An entry before sealing: everything but its digest. */
export type UnsealedEntry = DistributiveOmit<JournalEntry, 'digest'>;

/** What a writer supplies; the base fields (at, flow_digest, inputs_digest, seq, prev) are filled in. */
export type EntryDraft = DistributiveOmit<JournalEntry, 'digest' | 'at' | 'flow_digest' | 'inputs_digest' | 'seq' | 'prev'>;

export function entryDigest(entry: UnsealedEntry | JournalEntry): Digest {
  const { at: _at, digest: _digest, ...rest } = entry as JournalEntry;
  return digestOf(rest);
}

/**
 * Seal an entry: its digest added, keys in canonical order at every depth (so digests and JSON
 * serialisation take canonicalJson's fast path, also after a storage round trip), deep-frozen.
 */
export function sealEntry(entry: UnsealedEntry): JournalEntry {
  const source = entry as unknown as Record<string, unknown>;
  const keys = Object.keys(source).filter((k) => source[k] !== undefined && k !== 'digest');
  keys.push('digest');
  keys.sort();
  const body: Record<string, unknown> = {};
  for (const k of keys) if (k !== 'at' && k !== 'digest') body[k] = inCanonicalForm(source[k]);
  const digest = digestOf(body);
  const sealed: Record<string, unknown> = {};
  for (const k of keys) sealed[k] = k === 'digest' ? digest : k === 'at' ? source.at : body[k];
  return deepFreeze(sealed) as unknown as JournalEntry;
}

/**
 * Check seq order (entry i has seq i) and the hash chain (prev links, recomputed digests) of a
 * journal. Throws at the first bad entry: `journal_sequence` (missing or reordered entries) or
 * `journal_chain_broken` (a prev link or an entry digest that does not match), with
 * `data: {seq, step, field, expected, actual}`: `expected` is what a valid journal has there,
 * `actual` what the entry holds.
 */
export function checkJournalChain(entries: readonly JournalEntry[], component = 'journal'): void {
  let prev: Digest | null = null;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const step = 'step' in entry ? entry.step : null;
    if (entry.seq !== i) {
      throw new FlowError(
        'journal_sequence',
        `[flowctl] [${component}] entry at position ${i} has seq ${String(entry.seq)}: entries are missing or reordered`,
        { data: { seq: i, step, field: 'seq', expected: i, actual: entry.seq } },
      );
    }
    if (entry.prev !== prev) {
      throw new FlowError(
        'journal_chain_broken',
        `[flowctl] [${component}] entry ${i} does not link to the previous entry (prev ${String(entry.prev)}, expected ${String(prev)})`,
        { data: { seq: i, step, field: 'prev', expected: prev, actual: entry.prev } },
      );
    }
    const actual = entryDigest(entry);
    if (entry.digest !== actual) {
      throw new FlowError(
        'journal_chain_broken',
        `[flowctl] [${component}] entry ${i} (${entry.event}) does not match its digest: its content was changed`,
        { data: { seq: i, step, field: 'digest', expected: actual, actual: entry.digest } },
      );
    }
    prev = entry.digest;
  }
}

/** Every entry names the same flow digest; the first that does not is reported. */
export function checkJournalFlowDigest(entries: readonly JournalEntry[], expected: Digest, component = 'replay'): void {
  for (const entry of entries) {
    if (entry.flow_digest !== expected) {
      throw new FlowError(
        'flow_digest_mismatch',
        `[flowctl] [${component}] the journal was recorded for flow ${entry.flow_digest}, not ${expected}; refusing to replay against a different FlowSpec`,
        { data: { seq: entry.seq, step: 'step' in entry ? entry.step : null, field: 'flow_digest', expected, actual: entry.flow_digest } },
      );
    }
  }
}
