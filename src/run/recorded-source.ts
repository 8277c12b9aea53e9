import { digestOf } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { JournalWriter } from './journal-writer.js';
import { OPTIONAL_SKIP_PREFIX, TARGET_ABSENT } from './runner.js';
import type { StepSource } from './step-source.js';
import type { JournalEntry, StepError } from './types.js';

/**
 * Answers every step attempt from a recorded journal: no tool runs, no network, no effect fires.
 * The replay's journal mirrors the recording entry for entry, so the recorded entry that answers a
 * call is the one at the replay's next seq. When the recording has no answer there (a different
 * step, a missing entry), the replay diverges: FlowError `replay_divergence`.
 */
export function createRecordedSource(recorded: readonly JournalEntry[], writer: JournalWriter): StepSource {
  const at = (seq: number) => recorded[seq];

  return {
    prepare(step, attempt) {
      const seq = writer.entries.length;
      const entry = at(seq);
      if (entry?.event !== 'step_started' || entry.step !== step.id || entry.attempt !== attempt) {
        throw divergence(seq, step.id, 'event', describe(entry), `step_started ${step.id} attempt ${attempt}`);
      }
      return { provider: entry.provider };
    },

    async attempt(request, hooks) {
      const { step, attempt } = request;
      let seq = writer.entries.length;
      let entry = at(seq);
      while (entry?.event === 'effect_recorded' && entry.step === step.id && entry.attempt === attempt) {
        hooks.effect(entry.effect);
        entry = at(++seq);
      }
      if (entry?.event === 'run_finished' && entry.status !== 'succeeded') {
        // The original run was closed while this attempt ran (recovery, or a cancel from outside).
        const { step: _step, ...error } = entry.error ?? { code: entry.status, message: `the run ${entry.status}`, retryable: false };
        return { ok: false, error, warnings: [], ended: entry.status };
      }
      if (entry?.event === 'step_skipped' && entry.step === step.id && step.optional && entry.reason.startsWith(OPTIONAL_SKIP_PREFIX)) {
        // An optional step the original run skipped (its target was absent): the same skip.
        return { ok: false, error: { code: TARGET_ABSENT, message: entry.reason.slice(OPTIONAL_SKIP_PREFIX.length), retryable: false }, warnings: [] };
      }
      if ((entry?.event !== 'step_succeeded' && entry?.event !== 'step_failed') || entry.step !== step.id || entry.attempt !== attempt) {
        throw divergence(seq, step.id, 'event', describe(entry), `the end of step ${step.id} attempt ${attempt}`);
      }
      if (entry.event === 'step_succeeded') {
        return { ok: true, output: entry.output, warnings: entry.warnings ?? [], artifacts: entry.artifacts ?? [] };
      }
      return { ok: false, error: entry.error, warnings: entry.warnings ?? [] };
    },

    async backoff() {},

    async confirm() {
      return !stoppedUnconfirmed(at(writer.entries.length));
    },

    recordedStop() {
      const entry = at(writer.entries.length);
      if (entry?.event === 'run_finished' && entry.status !== 'succeeded') {
        const fallback: StepError & { step?: string } = {
          code: entry.status === 'canceled' ? 'canceled' : 'failed',
          message: `the run ${entry.status}`,
          retryable: false,
        };
        const { step: _step, ...error } = entry.error ?? fallback;
        return { status: entry.status, error };
      }
      return undefined;
    },
  };
}

function stoppedUnconfirmed(entry: JournalEntry | undefined): boolean {
  return entry?.event === 'run_finished' && entry.status === 'canceled' && entry.error?.code === 'effects_not_confirmed';
}

function describe(entry: JournalEntry | undefined): string | null {
  if (!entry) return null;
  return 'step' in entry ? `${entry.event} ${entry.step}${'attempt' in entry ? ` attempt ${entry.attempt}` : ''}` : entry.event;
}

export function divergence(seq: number, step: string | null, field: string, expected: unknown, actual: unknown): FlowError {
  return new FlowError(
    'replay_divergence',
    `[flowctl] [replay] diverged at seq ${seq}${step ? ` (step ${step})` : ''}: ${field} was ${show(expected)} in the recording, the replay has ${show(actual)}`,
    { data: { seq, step, field, expected: expected ?? null, actual: actual ?? null } },
  );
}

function show(v: unknown): string {
  return v === undefined || v === null ? 'nothing' : typeof v === 'string' ? v : JSON.stringify(v);
}

// Fields that may differ between a recording and its replay: time, the chain itself (the replay's
// run_started names the original run), and measured durations.
const IGNORED = new Set(['at', 'prev', 'digest', 'replay_of', 'duration_ms']);
const ORDER = [
  'event',
  'step',
  'attempt',
  'tool',
  'provider',
  'input_digest',
  'input',
  'output_digest',
  'output',
  'error',
  'will_retry',
  'effect',
  'reason',
  'warnings',
  'artifacts',
  'status',
  'flow_name',
  'inputs',
  'contracts',
  'flow_digest',
  'inputs_digest',
  'seq',
];

/**
 * The verify check: the replay's entry at `seq` must equal the recorded one in every field but
 * those that name time or the chain. Values are compared as JSON (what their digests would say); the
 * divergence reports digests for structured values and the values themselves for scalars.
 */
export function compareEntries(recorded: JournalEntry | undefined, actual: JournalEntry): FlowError | undefined {
  const step = 'step' in actual ? actual.step : null;
  if (!recorded) return divergence(actual.seq, step, 'event', null, actual.event);
  const r = recorded as unknown as Record<string, unknown>;
  const a = actual as unknown as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(r), ...Object.keys(a)])].filter((k) => !IGNORED.has(k));
  keys.sort((x, y) => rank(x) - rank(y) || (x < y ? -1 : x > y ? 1 : 0));
  for (const key of keys) {
    const rv = r[key];
    const av = a[key];
    if (rv === undefined && av === undefined) continue;
    if (rv === undefined || av === undefined || !jsonEqual(rv, av)) {
      return divergence(actual.seq, step, key, summarize(rv), summarize(av));
    }
  }
  return undefined;
}

/** Structural equality of JSON values (key order ignored): the same verdict as comparing digests, without hashing. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function rank(key: string): number {
  const i = ORDER.indexOf(key);
  return i < 0 ? ORDER.length : i;
}

function summarize(v: unknown): unknown {
  if (v === undefined) return null;
  return v !== null && typeof v === 'object' ? digestOf(v) : v;
}
