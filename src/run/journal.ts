import { canonicalJson, digestBytes, digestOf, inCanonicalForm, type Digest } from '../canonical.js';
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
 * Seal an entry: its digest added, the other members in canonical key order at every depth (so the
 * digest and later checks take canonicalJson's fast path, also after a storage round trip).
 */
export function sealEntry(entry: UnsealedEntry): JournalEntry {
  return sealEntryText(entry).entry;
}

// Every member an entry of the journal format can have but `at` and `digest`, in canonical order.
const MEMBER_ORDER = [
  'artifacts',
  'attempt',
  'contracts',
  'duration_ms',
  'effect',
  'error',
  'event',
  'flow_digest',
  'flow_name',
  'input',
  'input_digest',
  'inputs',
  'inputs_digest',
  'output',
  'output_digest',
  'prev',
  'provider',
  'reason',
  'replay_of',
  'seq',
  'status',
  'step',
  'tool',
  'warnings',
  'will_retry',
].sort();
const KNOWN_MEMBERS = new Set(MEMBER_ORDER);

/**
 * sealEntry, also giving the sealed entry's JSON text (`at` and `digest` first, then the members in
 * canonical order), made in the same pass: storage and responses use it instead of serialising the
 * entry again.
 */
export function sealEntryText(entry: UnsealedEntry): { entry: JournalEntry; text: string } {
  const source = entry as unknown as Record<string, unknown>;
  let known = true;
  for (const k in source) {
    if (k !== 'at' && k !== 'digest' && !KNOWN_MEMBERS.has(k)) {
      known = false;
      break;
    }
  }
  const order = known
    ? MEMBER_ORDER
    : Object.keys(source)
        .filter((k) => k !== 'at' && k !== 'digest')
        .sort();
  const body: Record<string, unknown> = {};
  // inCanonicalForm returns a value itself exactly when it is already in canonical order at every
  // depth; when every member is, the body (members in sorted order) is too, and JSON.stringify gives
  // canonicalJson's bytes without walking the body once more to find that out.
  let inOrder = known;
  for (const k of order) {
    const v = source[k];
    if (v === undefined) continue;
    const c = inCanonicalForm(v);
    if (c !== v) inOrder = false;
    body[k] = c;
  }
  const bodyText = inOrder ? JSON.stringify(body) : canonicalJson(body);
  const digest = digestBytes(bodyText);
  const at = source.at;
  const sealed = (at === undefined ? { digest, ...body } : { at, digest, ...body }) as unknown as JournalEntry;
  const head = `${at === undefined ? '' : `"at":${JSON.stringify(at)},`}"digest":"${digest}"`;
  return { entry: sealed, text: bodyText === '{}' ? `{${head}}` : `{${head},${bodyText.slice(1)}` };
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
      throw new FlowError('journal_chain_broken', `[flowctl] [${component}] entry ${i} (${entry.event}) does not match its digest: its content was changed`, {
        data: { seq: i, step, field: 'digest', expected: actual, actual: entry.digest },
      });
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
