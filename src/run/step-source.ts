import type { Digest } from '../canonical.js';
import type { ExprScope } from '../flow/expr.js';
import type { StepSpec } from '../flow/types.js';
import type { Effect, StepWarning } from '../tools/types.js';
import type { StepError } from './types.js';

/**
 * Where a step attempt's result comes from. The runner walks a FlowSpec the same way for a live run
 * and for a replay; only the source differs: `live-source.ts` executes tools, `recorded-source.ts`
 * answers every call from a recorded journal (hermetic and verify replay).
 */
export interface StepSource {
  /** The provider that runs the attempt, or the failure that stops it before it runs (unknown tool...). */
  prepare(step: StepSpec, attempt: number): { provider: string; failure?: StepError };
  attempt(request: AttemptRequest, hooks: AttemptHooks): Promise<AttemptResult>;
  /** Wait between attempts (live: the clock's sleep; recorded: no wait). */
  backoff(ms: number, signal?: AbortSignal): Promise<void>;
  /** Asked once before the first outward step (live: RunOptions.confirm; recorded: what the original run did). */
  confirm(step: StepSpec): Promise<boolean>;
  /**
   * Recorded only: where the original run stopped here, its end: a cancellation, or a run closed by
   * recovery (`worker_lost`) or by `engine.cancel` from outside.
   */
  recordedStop?(): { status: 'canceled' | 'failed'; error: StepError } | undefined;
  /**
   * Live only: wait for the run's artifact writes still under way (a step's screenshot is stored off
   * its path), so a finished run has every artifact its journal lists. Never throws.
   */
  flush?(): Promise<void>;
}

export interface AttemptRequest {
  step: StepSpec;
  attempt: number;
  /** The step input as journaled: secret inputs as references. */
  input: unknown;
  scope: ExprScope;
  /** Aborts when the run is canceled. */
  signal?: AbortSignal;
}

export interface AttemptHooks {
  /** Report an outward effect (journaled as effect_recorded; the key is derived when absent). */
  effect(effect: Effect): void;
}

export type AttemptResult =
  | {
      ok: true;
      output: unknown;
      warnings: StepWarning[];
      artifacts: Digest[];
      /** Artifacts whose bytes come after the step returned (ArtifactSink.later): their digests, once known. Never rejects. */
      later?: Promise<Digest[]>;
    }
  | { ok: false; error: StepError; warnings: StepWarning[]; ended?: 'canceled' | 'failed' };
// `ended` (recorded only): the original run was closed during this attempt (its process was lost or
// it was canceled from outside): no step_failed follows, the run ends with that status.
