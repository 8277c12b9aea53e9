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
 * Issue 13: a killed run is left non-terminal on disk (counted straight from the files), and the
 * first CLI command that opens the store recovers it before reading (its process is gone): after
 * that open every run is terminal, a killed one `failed` with `worker_lost` and a run_finished entry,
 * and `replay --verify` of it reports `worker_lost` (exit 1, a failed run), not `replay_divergence`.
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

    // Before any reader opens the store (so before any recovery): how many runs are non-terminal,
    // and how many kills landed between run_finished and the header update (the state of defect 9),
    // read straight from the files.
    const onDisk = async () => {
      let nonTerminal = 0;
      let unfinishedJournals = 0;
      let staleHeaders = 0;
      for (const id of await readdir(join(dir, '.flowctl', 'runs'))) {
        const header = JSON.parse(await readFile(join(dir, '.flowctl', 'runs', id, 'run.json'), 'utf8')) as { status: string };
        const lines = (await readFile(join(dir, '.flowctl', 'runs', id, 'journal.jsonl'), 'utf8')).split('\n');
        const last = lines.length > 1 ? (JSON.parse(lines[lines.length - 2]!) as { event: string; status?: string }) : undefined;
        if (header.status === 'pending' || header.status === 'running') nonTerminal++;
        if (last?.event !== 'run_finished') unfinishedJournals++;
        else if (header.status !== last.status) staleHeaders++;
      }
      return { nonTerminal, unfinishedJournals, staleHeaders };
    };
    const before = await onDisk();
    const staleHeaders = before.staleHeaders;

    // Reader 1: runs --json, the first open after the kills: it recovers the runs of the dead
    // processes before it reads (and removes stale temp files).
    const listed = await cli(['runs', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const records = JSON.parse(listed.stdout) as { id: string; status: string }[];
    // Every child printed a progress line before its kill, so every child made a run.
    expect(records).toHaveLength(kills + finishedFirst);
    expect(await tempFiles(join(dir, '.flowctl'))).toEqual([]);
    // After the recovering open nothing is left non-terminal: not in what it listed, not on disk.
    const shownNonTerminal = records.filter((r) => r.status === 'pending' || r.status === 'running').length;
    const after = await onDisk();
    expect(shownNonTerminal, 'runs listed as pending or running by the first runs --json').toBe(0);
    expect(after).toEqual({ nonTerminal: 0, unfinishedJournals: 0, staleHeaders: 0 });

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
    // Every run ends with run_finished: one that completed succeeded; one killed mid-way was ended
    // by recovery, failed with worker_lost.
    for (const run of inspected) {
      const last = run.journal.at(-1)!;
      expect(last.event, `run ${run.id}`).toBe('run_finished');
      if (run.status !== 'succeeded') {
        expect(run.status, `run ${run.id}`).toBe('failed');
        expect(last.event === 'run_finished' && last.error?.code, `run ${run.id}`).toBe('worker_lost');
      }
    }
    const finished = inspected.filter((r) => r.status === 'succeeded');
    const recovered = inspected.length - finished.length;
    // The runs non-terminal right after the kills were recovered by the first open; the others were
    // recovered earlier, by the `flowctl run` children started after them (each open recovers).
    expect(recovered).toBeGreaterThanOrEqual(before.nonTerminal);

    // Reader 3: replay --verify never crashes, and every run verifies (exit 0, docs/cli.md: a
    // faithfully reproduced failure verifies): a recovered run replays to the same failed
    // run_finished with worker_lost, never a replay_divergence.
    const codes = new Map<string, number>();
    await inBatches(inspected, PARALLEL, async (run) => {
      const r = await cli(['replay', run.id, '--verify', '--json']);
      expect(r.stderr, `replay ${run.id}`).not.toMatch(/internal error/);
      expect(r.code, `replay --verify of ${run.status} run ${run.id}: ${r.stdout} ${r.stderr}`).toBe(0);
      const replayed = JSON.parse(r.stdout) as Run;
      expect(replayed.status, `replay of run ${run.id}`).toBe(run.status);
      if (run.status === 'succeeded') return;
      const end = replayed.journal.at(-1)!;
      const code = end.event === 'run_finished' ? (end.error?.code ?? '(none)') : `(ends with ${end.event})`;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    });
    expect(Object.fromEntries(codes)).toEqual(recovered > 0 ? { worker_lost: recovered } : {});
    // A hermetic replay (no --verify) of a recovered run exits like `run` of a failed run: 1, with worker_lost.
    const lost = inspected.find((r) => r.status === 'failed');
    if (lost) {
      const r = await cli(['replay', lost.id, '--json']);
      expect(r.code, `replay of recovered run ${lost.id}: ${r.stderr}`).toBe(1);
      expect(r.stdout).toContain('worker_lost');
      expect(r.stdout).not.toContain('replay_divergence');
    }
    // Where the time went, and the counts (information, not assertions).
    console.log(
      `[kill-probe] seed ${SEED}: ${kills} kills after 1..${total} progress lines (${new Set(killedAt).size} distinct points), ` +
        `${finishedFirst} finished before the signal; runs: ${records.length}, succeeded ${finished.length}; ` +
        `non-terminal on disk right after the kills: ${before.nonTerminal} (${before.unfinishedJournals} journals without run_finished, ${staleHeaders} headers not yet updated); ` +
        `after the first runs --json: ${shownNonTerminal} listed non-terminal, ${after.nonTerminal} on disk; recovered in all ${recovered} (failed, worker_lost); ` +
        `replay --verify of recovered runs: ${JSON.stringify(Object.fromEntries(codes))}; ` +
        `kills ${((tKills - t0) / 1000).toFixed(1)} s, readers ${((Date.now() - tKills) / 1000).toFixed(1)} s`,
    );

    // Afterwards the store still lists every run (the replays included) and runs and inspect agree.
    const again = await cli(['runs', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const all = JSON.parse(again.stdout) as { id: string; status: string }[];
    expect(all).toHaveLength(records.length * 2 + (lost ? 1 : 0));
    const last = await cli(['inspect', 'last', '--json']);
    expect((JSON.parse(last.stdout) as Run).status).toBe(all[0]!.status);
    expect(await tempFiles(join(dir, '.flowctl'))).toEqual([]);
  }, 600_000); // a cap on a hang on a loaded machine, not a timing assertion
});
