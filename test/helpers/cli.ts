import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The package's bin; tests run the built CLI exactly as a user would (test/global-setup.ts builds it).
 * FLOWCTL_TEST_BIN points the tests at another build of the same bin (e.g. a private one while others
 * rebuild dist/).
 */
export const FLOWCTL_BIN = process.env.FLOWCTL_TEST_BIN ?? resolve(import.meta.dirname, '../../bin/flowctl.mjs');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Written to stdin, then stdin is closed. Without it stdin is closed at once (no TTY). */
  input?: string;
  /** Kill after this many ms: a cap on a hang (below the 120 s test timeout), not an assertion. Default 100 s. */
  timeoutMs?: number;
}

/** Spawn `flowctl` asynchronously (never spawnSync: tests often serve pages from the same process). */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) {
      if (v !== undefined) env[k] = v;
    }
    const child = spawn(process.execPath, [FLOWCTL_BIN, ...args], { cwd: options.cwd, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 100_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export async function tempProject(prefix = 'flowctl-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}
