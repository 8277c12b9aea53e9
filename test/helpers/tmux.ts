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
  /** Poll the screen until `pattern` shows up (bounded); returns the screen. Throws with the screen on timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Poll until the command has exited (bounded); returns its exit status and final screen. */
  waitExit(timeoutMs?: number): Promise<{ code: number; screen: string }>;
}

const POLL_MS = 100;

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
  await tmux('new-session', '-d', '-s', socket, '-x', '200', '-y', '50', '-c', options.cwd, command.map(shellQuote).join(' '));
  const session: TmuxSession = {
    async capture() {
      return (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', target)).stdout;
    },
    async send(...keys) {
      await tmux('send-keys', '-t', target, ...keys);
    },
    async waitFor(pattern, timeoutMs = 20_000) {
      let screen = '';
      for (let waited = 0; waited <= timeoutMs; waited += POLL_MS) {
        screen = await session.capture();
        if (pattern.test(screen)) return screen;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      throw new Error(`tmux: ${pattern} did not appear within ${timeoutMs} ms; screen:\n${screen}`);
    },
    async waitExit(timeoutMs = 30_000) {
      for (let waited = 0; waited <= timeoutMs; waited += POLL_MS) {
        const [dead, status] = (await tmux('display-message', '-p', '-t', target, '#{pane_dead} #{pane_dead_status}')).stdout.trim().split(' ');
        if (dead === '1') return { code: Number(status), screen: await session.capture() };
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      throw new Error(`tmux: command did not exit within ${timeoutMs} ms; screen:\n${await session.capture()}`);
    },
  };
  try {
    return await body(session);
  } finally {
    await tmux('kill-server').catch(() => undefined);
    await rm(confDir, { recursive: true, force: true });
  }
}
