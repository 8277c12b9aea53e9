import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyJournal } from '../../src/run/fixture.js';
import type { Run } from '../../src/run/types.js';
import { below, prng, testSeed } from '../helpers/seeded.js';
import { snapshotDist } from './dist-snapshot.js';

/**
 * The kill probe of issue 12: `flowctl run` (the spawned binary, a private copy of the build) is
 * SIGKILLed 100 times at seeded points, then every run must be readable by every reader: `runs
 * --json`, `inspect --json` and `replay --verify` never crash (no exit 70, structured errors only),
 * and `runs` and `inspect` report the same status for every run.
 *
 * Kill points are events, not delays: the child prints one progress line per step event, each after
 * its journal entry is appended (docs/cli.md, "Progress"), so after K lines the journal holds at least
 * K + 1 entries. K is drawn from the seed for each child; the child is killed as soon as its K-th line
 * arrives (and keeps running a little while the signal is on its way, which spreads the kill points
 * over the appends, the header updates and the steps in between). A child that finishes before its
 * signal lands (K near the end) is not a kill: more children are spawned until 100 kills landed.
 */
const KILLS = Number(process.env.FLOWCTL_KILLS ?? 100);
const STEPS = 12;
const PARALLEL = 4;
const MAX_SPAWNS = KILLS * 2; // bounds the loop; a run that always finished first would fail the test
const SEED = testSeed(20261123);

let snap: Awaited<ReturnType<typeof snapshotDist>>;
let dir: string;
beforeAll(async () => {
  snap = await snapshotDist();
  dir = await mkdtemp(join(tmpdir(), 'flowctl-kill-probe-'));
  await mkdir(join(dir, 'flows'));
  // A cheap pure flow: each step's output feeds the next, so replay --verify recomputes every input.
  const steps = Array.from({ length: STEPS }, (_, i) =>
    [
      `  - id: s${i}`,
      '    tool: core/template@1',
      '    args:',
      `      template: "{{ v }}-${i}"`,
      '      values:',
      `        v: ${i === 0 ? '${inputs.n}' : `\${steps.s${i - 1}.output.text}`}`,
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'flows', 'probe.yaml'),
    `name: probe\ninputs:\n  n:\n    type: integer\nsteps:\n${steps.join('\n')}\noutput: \${steps.s${STEPS - 1}.output.text}\n`,
  );
}, 180_000);
afterAll(async () => {
  await snap?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  lines: number;
  /** Killed by the cap on a hang rather than at its kill point. */
  hung: boolean;
}

/** Spawn the CLI in the probe project; with `killAfterLines`, SIGKILL it once that many progress lines arrived. */
function cli(args: string[], killAfterLines?: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    // NODE_COMPILE_CACHE: the 300-odd children compile the CLI once, not each time.
    const env = { ...process.env, NO_COLOR: '1', NODE_COMPILE_CACHE: join(snap.dist, '..', '.compile-cache') };
    const child = spawn(process.execPath, [snap.bin, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    let lines = 0;
    let hung = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      lines += d.split('\n').length - 1;
      if (killAfterLines !== undefined && lines >= killAfterLines) child.kill('SIGKILL');
    });
    // A cap on a hang only (a run of this flow takes well under a second).
    const cap = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, 100_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(cap);
      resolve({ code, signal, stdout, stderr, lines, hung });
    });
  });
}

/** Run `task` over `items`, `limit` at a time. */
async function inBatches<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Every name under `root` (recursively) that is a temp file of a writer. */
async function tempFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (/^\.tmp-|\.\d+\.\d+\.tmp$/.test(e.name)) found.push(join(e.parentPath, e.name));
  }
  return found;
}

describe(`kill probe: ${KILLS} SIGKILLs of flowctl run at seeded points (seed ${SEED})`, () => {
  it('leaves every run readable, agreed on by runs and inspect, with no crash of any reader', async () => {
    const t0 = Date.now();
    const random = prng(SEED);
    // Progress lines: 2 per step (started, succeeded); the last one comes right before run_finished.
    const total = 2 * STEPS;
    let kills = 0;
    let finishedFirst = 0;
    let spawned = 0;
    const killedAt: number[] = [];
    while (kills < KILLS) {
      expect(spawned, `more than ${MAX_SPAWNS} children for ${KILLS} kills`).toBeLessThan(MAX_SPAWNS);
      const batch = Array.from({ length: Math.min(PARALLEL, KILLS - kills) }, () => 1 + below(random, total));
      const results = await Promise.all(batch.map((k) => cli(['run', 'probe', '--input', `n=${spawned++}`], k)));
      results.forEach((r, i) => {
        expect(r.hung, `child killed by the cap on a hang after ${r.lines} lines: ${r.stderr}`).toBe(false);
        if (r.signal === 'SIGKILL') {
          expect(r.lines).toBeGreaterThanOrEqual(batch[i]!);
          kills++;
          killedAt.push(batch[i]!);
        } else {
          // Finished before the signal landed: a complete, successful run.
          expect(r.code, r.stderr).toBe(0);
          finishedFirst++;
        }
      });
    }
    expect(kills).toBe(KILLS);
    const tKills = Date.now();

    // Before any reader opens the store: how many kills landed between run_finished and the header
    // update (the state of defect 9), read straight from the files.
    let staleHeaders = 0;
    for (const id of await readdir(join(dir, '.flowctl', 'runs'))) {
      const header = JSON.parse(await readFile(join(dir, '.flowctl', 'runs', id, 'run.json'), 'utf8')) as { status: string };
      const lines = (await readFile(join(dir, '.flowctl', 'runs', id, 'journal.jsonl'), 'utf8')).split('\n');
      const last = lines.length > 1 ? (JSON.parse(lines[lines.length - 2]!) as { event: string }) : undefined;
      if (last?.event === 'run_finished' && header.status !== 'succeeded') staleHeaders++;
    }

    // Reader 1: runs --json (the first open after the kills also removes stale temp files).
    const listed = await cli(['runs', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const records = JSON.parse(listed.stdout) as { id: string; status: string }[];
    // Every child printed a progress line before its kill, so every child made a run.
    expect(records).toHaveLength(kills + finishedFirst);
    expect(await tempFiles(join(dir, '.flowctl'))).toEqual([]);

    // Reader 2: inspect --json of every run agrees with runs on the status; the chain verifies.
    const inspected = await inBatches(records, PARALLEL, async (rec) => {
      const r = await cli(['inspect', rec.id, '--json']);
      expect(r.code, `inspect ${rec.id}: ${r.stderr}`).toBe(0);
      const run = JSON.parse(r.stdout) as Run;
      expect(run.status, `run ${rec.id}: runs says ${rec.status}, inspect says ${run.status}`).toBe(rec.status);
      expect(run.journal[0]?.event).toBe('run_started');
      verifyJournal(run);
      return run;
    });
    const finished = inspected.filter((r) => r.journal.at(-1)!.event === 'run_finished');
    for (const run of finished) expect(run.status).toBe('succeeded');
    for (const run of inspected) if (run.journal.at(-1)!.event !== 'run_finished') expect(run.status).toBe('running');

    // Reader 3: replay --verify never crashes: a finished run verifies (exit 0); a run killed
    // mid-way is a structured failure (exit 1, error.code on stdout with --json).
    const codes = new Map<string, number>();
    await inBatches(inspected, PARALLEL, async (run) => {
      const r = await cli(['replay', run.id, '--verify', '--json']);
      expect(r.stderr, `replay ${run.id}`).not.toMatch(/internal error/);
      if (run.status === 'succeeded') {
        expect(r.code, `replay --verify of finished run ${run.id}: ${r.stderr}`).toBe(0);
        return;
      }
      expect(r.code, `replay --verify of killed run ${run.id}: ${r.stderr}`).toBe(1);
      const code = (JSON.parse(r.stdout) as { error: { code: string } }).error.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    });
    // What verify says of a run that never finished, and where the time went (information, not assertions).
    console.log(
      `[kill-probe] seed ${SEED}: ${kills} kills after 1..${total} progress lines (${new Set(killedAt).size} distinct points), ` +
        `${finishedFirst} finished before the signal; runs: ${records.length}, finished ${finished.length}, ` +
        `of which ${staleHeaders} with the header not yet updated; replay --verify of unfinished runs: ${JSON.stringify(Object.fromEntries(codes))}; ` +
        `kills ${((tKills - t0) / 1000).toFixed(1)} s, readers ${((Date.now() - tKills) / 1000).toFixed(1)} s`,
    );

    // Afterwards the store still lists every run (the replays included) and runs and inspect agree.
    const after = await cli(['runs', '--json']);
    expect(after.code, after.stderr).toBe(0);
    const all = JSON.parse(after.stdout) as { id: string; status: string }[];
    expect(all).toHaveLength(records.length * 2);
    const last = await cli(['inspect', 'last', '--json']);
    expect((JSON.parse(last.stdout) as Run).status).toBe(all[0]!.status);
    expect(await tempFiles(join(dir, '.flowctl'))).toEqual([]);
  }, 600_000); // a cap on a hang on a loaded machine, not a timing assertion
});
