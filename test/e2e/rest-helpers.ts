import { spawn, type ChildProcess } from 'node:child_process';

/** A long-running process spawned by a REST e2e test (flowctl serve, the engine-launcher example). */
export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr; rejects after `boundMs` or on exit. */
  waitFor(pattern: RegExp, boundMs?: number): Promise<RegExpMatchArray>;
  /** Send `signal` and resolve with the exit code (SIGKILL after `boundMs`). */
  stop(signal?: NodeJS.Signals, boundMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnProcess(args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Spawned {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) if (v !== undefined) env[k] = v;
  const child = spawn(process.execPath, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve({ code, signal });
      for (const l of listeners) l();
    });
  });

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, boundMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = (out + err).match(pattern);
          if (m) return finish(() => resolve(m));
          if (exitInfo) finish(() => reject(new Error(`process exited (${exitInfo!.code ?? exitInfo!.signal}) before ${pattern}:\n${out}\n${err}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${boundMs} ms:\n${out}\n${err}`))), boundMs);
        const finish = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', boundMs = 20_000) {
      if (!exitInfo) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
