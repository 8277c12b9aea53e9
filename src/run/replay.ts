import { digestOf, inCanonicalForm, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import { checkJournalChain, checkJournalFlowDigest } from './journal.js';
import { compareEntries, divergence } from './recorded-source.js';
import { parseJournal } from './run-schema.js';
import type { JournalEntry, RunStartedEntry } from './types.js';

/**
 * Replay of a recorded run. Modes (see docs/journal.md):
 * - hermetic (default): every tool call is answered from the journal; no tool runs, no network, no
 *   effect fires, nobody is asked to confirm.
 * - verify: hermetic, and before anything runs the recorded journal's seq order and hash chain are
 *   checked; then every entry the replay writes (input digests recomputed from the spec and inputs,
 *   output digests recomputed from the recorded outputs) must equal the recorded one. The first
 *   difference stops the replay with `replay_divergence`.
 * - rerun: the tools run live again through the normal runner (same confirmation rule as a run).
 *
 * Codes: `invalid_journal` (not a journal), `flow_digest_mismatch` (the journal was recorded for
 * another FlowSpec), `journal_sequence` (entries missing or reordered), `journal_chain_broken`
 * (prev link or entry digest wrong), `replay_divergence` (the replay computed something else).
 */
export type ReplayModeName = 'hermetic' | 'verify' | 'rerun';

export interface ReplayPlan {
  spec: FlowSpec;
  flow_digest: Digest;
  journal: JournalEntry[];
  /** The recorded run_started: inputs to replay with. */
  started: RunStartedEntry;
}

/** Check a recorded journal against the FlowSpec it claims, before a replay run exists. */
export function planReplay(spec: FlowSpec, journal: unknown, mode: ReplayModeName): ReplayPlan {
  const entries = parseJournal(journal, 'replay');
  if (entries.length === 0) {
    throw new FlowError('journal_sequence', '[flowctl] [replay] the journal is empty', {
      data: { seq: 0, step: null, field: 'event', expected: 'run_started', actual: null },
    });
  }
  // The same bytes as digestOf(spec) (canonicalJson of a value and of its canonical form agree), and
  // cheaper for a spec whose keys are not in canonical order, as hand-built specs usually are.
  const flowDigest = digestOf(inCanonicalForm(spec));
  checkJournalFlowDigest(entries, flowDigest);
  if (mode === 'verify') checkJournalChain(entries, 'replay');
  const first = entries[0]!;
  if (first.event !== 'run_started') {
    throw new FlowError('journal_sequence', `[flowctl] [replay] the journal starts with ${first.event}, not run_started`, {
      data: { seq: 0, step: null, field: 'event', expected: 'run_started', actual: first.event },
    });
  }
  const finished = entries.findIndex((e) => e.event === 'run_finished');
  if (finished >= 0 && finished !== entries.length - 1) {
    throw new FlowError('journal_sequence', `[flowctl] [replay] entries follow run_finished (seq ${finished})`, {
      data: { seq: finished + 1, step: null, field: 'event', expected: null, actual: entries[finished + 1]!.event },
    });
  }
  return { spec, flow_digest: flowDigest, journal: entries, started: first };
}

/**
 * The verify check: compares each entry the replay writes with the recorded one at the same seq.
 * After the first divergence it stays quiet, so the replay run can still be closed. Only for a
 * recorded journal whose chain was checked (planReplay in verify mode).
 */
export function createVerifyCheck(recorded: readonly JournalEntry[]): (entry: JournalEntry) => void {
  let tripped = false;
  return (entry) => {
    if (tripped) return;
    const original = recorded[entry.seq];
    // planReplay checked the recorded chain, so a recorded digest is the digest of that entry's
    // content: an equal digest means equal content (every compared member is under the digest).
    if (original?.digest === entry.digest) return;
    // The replay's run_started names the original run, so from there on every prev (and with it
    // every digest) differs: entries equal in all but the chain members pass here without the
    // member-by-member comparison, which only runs to name the divergence.
    if (original !== undefined && equalButChain(original, entry)) return;
    const diff = compareEntries(original, entry);
    if (diff) {
      tripped = true;
      throw diff;
    }
  };
}

/**
 * Whether two entries hold equal JSON in every member but `at`, `prev` and `digest`. Never more
 * lenient than compareEntries (which also ignores a few more members): true means it finds no
 * divergence; false sends the entry to it.
 */
function equalButChain(a: JournalEntry, b: JournalEntry): boolean {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  let members = 0;
  for (const key of Object.keys(x)) {
    if (key === 'at' || key === 'prev' || key === 'digest' || x[key] === undefined) continue;
    if (!sameJson(x[key], y[key])) return false;
    members++;
  }
  for (const key of Object.keys(y)) {
    if (key === 'at' || key === 'prev' || key === 'digest' || y[key] === undefined) continue;
    members--;
  }
  return members === 0;
}

/** Structural equality of JSON values, key order ignored, undefined object members dropped. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key of Object.keys(x)) {
    if (x[key] === undefined) continue;
    if (!sameJson(x[key], y[key])) return false;
    members++;
  }
  for (const key of Object.keys(y)) if (y[key] !== undefined) members--;
  return members === 0;
}

/** After a verify replay: the recording may not hold entries the replay never reached. */
export function checkReplayComplete(recorded: readonly JournalEntry[], written: number): FlowError | undefined {
  if (recorded.length <= written) return undefined;
  const extra = recorded[written]!;
  return divergence(written, 'step' in extra ? extra.step : null, 'event', extra.event, null);
}
