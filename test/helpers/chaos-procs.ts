import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { waitForLine } from './child-line.mjs';
import { inCi } from './postgres.js';
import { findPgBinaries, type PgBinaries } from './private-postgres.js';

/**
 * The processes of the chaos test (test/chaos/hosted-chaos.test.ts): the shipped
 * examples/hosted-service/main.mjs spawned as API and worker processes, killed with the Chromium
 * below them, asked for /readyz, and stopped (drained) at the end.
 */

export interface Proc {
  name: string;
  role: 'api' | 'worker';
  child: ChildProcess;
  url: string;
  log: () => string;
  dead: boolean;
}

export interface SpawnOptions {
  /** Each process runs in a folder of its own under it (SVC_DATA_DIR). */
  workDir: string;
  mainPath: string;
  /** The deployment's settings, as the environment (the role's own come from `spawnProc`). */
  env: Record<string, string>;
}

/** Pids of every descendant of `pid` (a worker's Chromium), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

const bins = findPgBinaries();

export function describeChaos(title: string, body: (bins: PgBinaries) => void): void {
  if (!('missing' in bins)) {
    describe(title, () => body(bins));
  } else if (inCi()) {
    describe(title, () => {
      it('needs PostgreSQL server binaries', () => {
        throw new Error(`CI is set but ${bins.missing}`);
      });
    });
  } else {
    process.stderr.write(`[test] skipping "${title}": ${bins.missing}\n`);
    describe.skip(title, () => body(bins as never));
  }
}

/** Starts a process and resolves with it once it logs its URL (rejects if it exits first). */
export async function spawnProc(name: string, role: 'api' | 'worker', options: SpawnOptions): Promise<Proc> {
  const dataDir = join(options.workDir, name);
  await mkdir(dataDir, { recursive: true });
  const child = spawn(process.execPath, [options.mainPath], {
    cwd: dataDir,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_ROLE: role,
      SVC_DATA_DIR: dataDir,
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // The whole log is searched later (chaos checks): keep a large tail.
  const { match, output } = await waitForLine(child, /flowctl hosted (?:service|worker) on (http:\/\/\S+)/, { stream: 'stderr', what: name, keep: 4_000_000 });
  const url = match[1]!;
  const proc: Proc = { name, role, child, url, log: output, dead: false };
  return proc;
}

/** SIGKILL a process and the Chromium below it. */
export async function killProc(proc: Proc): Promise<void> {
  const pid = proc.child.pid!;
  const below = descendants(pid);
  const gone = new Promise((r) => proc.child.once('exit', r));
  proc.child.kill('SIGKILL');
  await gone;
  proc.dead = true;
  // Its Chromium (its own process group) would outlive it: the same end.
  for (const p of below) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The status of a process's /readyz, or 0 for no answer. */
export async function readyz(proc: Proc): Promise<number> {
  try {
    const res = await fetch(`${proc.url}/readyz`);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** SIGTERM every live process (it drains; SIGKILL caps a hang), then what it left below it. */
export async function stopProcs(procs: Proc[]): Promise<void> {
  for (const p of procs) {
    if (p.dead || p.child.exitCode !== null) continue;
    const below = descendants(p.child.pid!);
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 60_000); // caps a hang of the drain
    await exited;
    clearTimeout(timer);
    for (const c of below) {
      try {
        process.kill(c, 'SIGKILL');
      } catch {
        // it ended with its parent
      }
    }
  }
}
