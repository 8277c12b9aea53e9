/** Injected time and ids, so tests and replay are deterministic. Nothing else in the core reads the clock. */
export interface Clock {
  /** Current time as an ISO-8601 string. */
  now(): string;
  /** Milliseconds, monotonic-ish, for durations. */
  millis(): number;
  /** Wait (retry backoff). Must honour `signal`. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface IdSource {
  /** A new uuid v4. */
  uuid(): string;
}

export interface Logger {
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
}
