import type { Effect, StepWarning } from '../../src/tools/types.js';

/** Messages between the subprocess sandbox (parent) and its worker process, over the IPC channel as JSON. */

/** Parent -> worker: run one tool call. `contract_digest` must match the worker's own copy of the tool. */
export interface CallMessage {
  type: 'call';
  ref: string;
  version: string;
  contract_digest: string;
  input: unknown;
  ctx: {
    runId: string;
    stepId: string;
    attempt: number;
    timeoutMs: number;
    /** The tool's root: the sandbox directory. */
    cwd: string;
    options?: Record<string, unknown>;
  };
}

/** Parent -> worker: abort the running call (its ctx.signal aborts); the worker then answers and exits. */
export interface AbortMessage {
  type: 'abort';
}

export type ToWorker = CallMessage | AbortMessage;

export interface SerializedError {
  code: string;
  message: string;
  data?: unknown;
}

export type FromWorker =
  /** Sent once the worker listens for messages; the parent sends the call only after it. */
  | { type: 'ready' }
  | { type: 'effect'; effect: Effect }
  | { type: 'warning'; warning: StepWarning }
  | { type: 'log'; level: 'debug' | 'info' | 'warn'; message: string; data?: unknown }
  | { type: 'result'; ok: true; output: unknown }
  | { type: 'result'; ok: false; error: SerializedError };

/** Set in the worker's environment; the worker module does nothing unless it is present. */
export const WORKER_ENV_MARK = 'FLOWCTL_SANDBOX_WORKER';
