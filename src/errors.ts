/**
 * One error class for the whole core. `code` is a stable, documented string; `data` carries the
 * structured detail (diagnostics, divergence report, issues); `cause` is kept.
 * Messages are prefixed with where they came from, e.g. `[flowctl] [storage-fs] ...`.
 */
export class FlowError extends Error {
  readonly code: string;
  readonly data?: unknown;

  constructor(code: string, message: string, options: { data?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlowError';
    this.code = code;
    if (options.data !== undefined) this.data = options.data;
  }

  /** The `{code, message}` body used by replay errors and the CLI's `--json` failures. */
  toJSON(): { code: string; message: string; data?: unknown } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

export function isFlowError(err: unknown, code?: string): err is FlowError {
  return err instanceof FlowError && (code === undefined || err.code === code);
}

/** Prefix a message with the component it came from: `[flowctl] [storage-fs] message`. */
export function prefixed(component: string, message: string): string {
  return `[flowctl] [${component}] ${message}`;
}
