import type { Digest } from '../canonical.js';
import type { StepWarning } from '../tools/types.js';

export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const TERMINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'canceled'];

/** The Run object of spec/engine.md: exactly these fields, nothing more. */
export interface Run {
  id: string;
  flow_digest: Digest;
  status: RunStatus;
  started_at: string;
  finished_at?: string;
  journal: JournalEntry[];
  output?: unknown;
}

export interface StepError {
  code: string;
  message: string;
  retryable: boolean;
}

export interface ToolPin {
  ref: string;
  version: string;
  contract_digest: Digest;
}

/** Fields every journal entry carries. See docs/journal.md. */
export interface JournalBase {
  event: JournalEvent;
  at: string;
  flow_digest: Digest;
  inputs_digest: Digest;
  seq: number;
  /** Digest of the previous entry; null on the first entry (seq 0). */
  prev: Digest | null;
  /** This entry's digest: digestOf(entry without `at` and `digest`). */
  digest: Digest;
}

export type JournalEvent = 'run_started' | 'step_started' | 'step_succeeded' | 'step_failed' | 'step_skipped' | 'effect_recorded' | 'run_finished';

export interface RunStartedEntry extends JournalBase {
  event: 'run_started';
  flow_name: string;
  /** Resolved inputs; secret inputs appear as their references, never values. */
  inputs: Record<string, unknown>;
  contracts: ToolPin[];
  /** Set on a replay run: the replayed run's id and the replay mode. */
  replay_of?: { run_id: string; mode: 'hermetic' | 'verify' | 'rerun' };
}

export interface StepStartedEntry extends JournalBase {
  event: 'step_started';
  step: string;
  tool: ToolPin;
  attempt: number;
  /** The resolved step input, secrets masked as `***`. */
  input: unknown;
  input_digest: Digest;
  /** Which executor/sandbox provider ran the step (e.g. `in-process`, `subprocess`). */
  provider: string;
}

export interface StepSucceededEntry extends JournalBase {
  event: 'step_succeeded';
  step: string;
  attempt: number;
  output: unknown;
  output_digest: Digest;
  warnings?: StepWarning[];
  /** Digests of artifacts (e.g. screenshots) the step stored. */
  artifacts?: Digest[];
  duration_ms?: number;
}

export interface StepFailedEntry extends JournalBase {
  event: 'step_failed';
  step: string;
  attempt: number;
  error: StepError;
  /** True when another attempt follows. */
  will_retry: boolean;
  warnings?: StepWarning[];
  duration_ms?: number;
}

export interface StepSkippedEntry extends JournalBase {
  event: 'step_skipped';
  step: string;
  reason: string;
}

export interface EffectRecordedEntry extends JournalBase {
  event: 'effect_recorded';
  step: string;
  attempt: number;
  effect: { kind: 'net' | 'fs' | 'spawn' | 'browser'; target: string; idempotency_key: string };
}

export interface RunFinishedEntry extends JournalBase {
  event: 'run_finished';
  status: 'succeeded' | 'failed' | 'canceled';
  output?: unknown;
  error?: StepError & { step?: string };
}

export type JournalEntry =
  | RunStartedEntry
  | StepStartedEntry
  | StepSucceededEntry
  | StepFailedEntry
  | StepSkippedEntry
  | EffectRecordedEntry
  | RunFinishedEntry;
