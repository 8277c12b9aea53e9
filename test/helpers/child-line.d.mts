import type { ChildProcess } from 'node:child_process';

/** Default cap on the wait: a hang, not a slow machine. */
export declare const LINE_CAP_MS: number;
/** Characters of output kept by default (the tail). */
export declare const KEEP_CHARS: number;

export interface WaitForLineOptions {
  /** The stream to follow (a pipe). Default 'stdout'. */
  stream?: 'stdout' | 'stderr';
  /** The process's name in errors. Default `process <pid>`. */
  what?: string;
  /** Cap on the wait (a hang). Default LINE_CAP_MS. */
  capMs?: number;
  /** Characters of output kept (the tail). Default KEEP_CHARS. */
  keep?: number;
  /** More output to show in errors (the other stream, collected by the caller). */
  alsoShow?: () => string;
}

export interface LineFound {
  line: string;
  match: RegExpExecArray;
  /** The tail of everything the stream wrote, still growing after the line. */
  output: () => string;
}

/** The first complete line of `child`'s stream matching `pattern`; rejects with the last output when the child ends first or the cap is reached. */
export declare function waitForLine(child: ChildProcess, pattern: RegExp | string, options?: WaitForLineOptions): Promise<LineFound>;
