import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * A command running in a real pseudo-terminal: a private tmux server (its own socket, no user
 * config), one detached session, `remain-on-exit` so the final screen and exit status stay readable.
 */
export interface TmuxSession {
  /** The visible screen plus scrollback, as text. */
  capture(): Promise<string>;
  /** Type keys (tmux send-keys syntax: `'n'`, `'Enter'`, `'C-c'`). */
  send(...keys: string[]): Promise<void>;
  /**
   * Poll the screen until `pattern` shows up; returns the screen. `capMs` (default 60 s of wall time)
   * only ends a hang: reaching it throws with the screen.
   */
  waitFor(pattern: RegExp, capMs?: number): Promise<string>;
  /** Poll until the command has exited (capped like waitFor); returns its exit status (128+n for signal n) and final screen. */
  waitExit(capMs?: number): Promise<{ code: number; screen: string }>;
}

const POLL_MS = 100;
const HANG_CAP_MS = 60_000;
const EXIT_MARK = '__flowctl_test_exit=';

export function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export async function withTmux<T>(
  command: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
  body: (session: TmuxSession) => Promise<T>,
): Promise<T> {
  const socket = `flowctl-test-${randomUUID().slice(0, 8)}`;
  const confDir = await mkdtemp(join(tmpdir(), 'flowctl-tmux-'));
  const conf = join(confDir, 'tmux.conf');
  await writeFile(conf, 'set -g remain-on-exit on\nset -g history-limit 5000\n');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) if (v !== undefined) env[k] = v;
  delete env.TMUX;
  const tmux = (...args: string[]) => exec('tmux', ['-L', socket, '-f', conf, ...args], { cwd: options.cwd, env });
  const target = `${socket}:0.0`;
  // The shell prints the exit status itself: tmux's #{pane_dead_status} is not always filled in
  // (it depends on when tmux reaps the child), a line on the screen always is.
  const line = `${command.map(shellQuote).join(' ')}; printf '\\n${EXIT_MARK}%s\\n' "$?"`;
  await tmux('new-session', '-d', '-s', socket, '-x', '200', '-y', '50', '-c', options.cwd, line);
  const session: TmuxSession = {
    async capture() {
      return (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', target)).stdout;
    },
    async send(...keys) {
      await tmux('send-keys', '-t', target, ...keys);
    },
    async waitFor(pattern, capMs = HANG_CAP_MS) {
      // Wall time, not a count of polls: each capture is a tmux process, slower on a loaded machine.
      const deadline = Date.now() + capMs;
      for (;;) {
        const screen = await session.capture();
        if (pattern.test(screen)) return screen;
        if (Date.now() >= deadline) throw new Error(`tmux: ${pattern} did not appear within ${capMs} ms (a cap on a hang); screen:\n${screen}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    async waitExit(capMs = HANG_CAP_MS) {
      const screen = await session.waitFor(new RegExp(`${EXIT_MARK}\\d+`), capMs);
      const code = Number(new RegExp(`${EXIT_MARK}(\\d+)`).exec(screen)![1]);
      return { code, screen: screen.replace(new RegExp(`\\n?${EXIT_MARK}\\d+\\n?`), '\n') };
    },
  };
  try {
    return await body(session);
  } finally {
    await tmux('kill-server').catch(() => undefined);
    await rm(confDir, { recursive: true, force: true });
  }
}
