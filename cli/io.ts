import type { ParsedArgs } from './args.js';

/** What a command gets: its streams and environment are injected so tests can drive commands in-process. */
export interface CliIO {
  cwd: string;
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /**
   * Set by the bin: the process exits (process.exit) as soon as the command returns, so a browser a
   * run launched is left to playwright-core's exit handler rather than closed gracefully (docs/cli.md,
   * "Start-up work"). Unset (tests calling main in their own process), everything is closed.
   */
  exitsAfter?: boolean;
}

/** A command: returns its exit code. Usage problems throw UsageError (exit 2). */
export type CommandFn = (args: ParsedArgs, io: CliIO) => Promise<number>;

/** Exit codes; documented in docs/cli.md. */
export const EXIT = {
  ok: 0,
  /** The operation ran and failed: a failed run, a replay divergence, a failed verify, a conflict. */
  failed: 1,
  /** Bad usage or a compile failure (diagnostics printed). */
  usage: 2,
  /** An outward effect was not confirmed (answered no, or no terminal and no --yes). */
  refused: 3,
  /** A bug in flowctl. */
  internal: 70,
} as const;
