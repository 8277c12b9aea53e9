import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { verifyJournal } from '../../src/run/fixture.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { below, prng, testSeed } from '../helpers/seeded.js';
import { snapshotDist } from './dist-snapshot.js';

const CHILD = resolve(import.meta.dirname, 'crash-child.mjs');
const KILLS = Number(process.env.KILLS ?? 24);

let dist: Awaited<ReturnType<typeof snapshotDist>>;
beforeAll(async () => {
  dist = await snapshotDist();
}, 120_000);
afterAll(async () => dist?.cleanup());

/**
 * Spawn the child; with `killAfter`, SIGKILL it as soon as it reports its killAfter-th journal append
 * (an event, not a delay: the signal lands a little later, wherever the child has got to by then).
 */
function spawnChild(dir: string, args: string[] = [], killAfter?: number) {
  const child = spawn(process.execPath, [CHILD, dir, '150', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLOWCTL_DIST: dist.dist },
  });
  let stdout = '';
  let stderr = '';
  let appended = 0;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    appended += (d.match(/^e \d+$/gm) ?? []).length;
    if (killAfter !== undefined && appended >= killAfter) child.kill('SIGKILL');
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A cap on a hang only: a child that never reaches its kill point is killed here and reported.
  const cap = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => {
      clearTimeout(cap);
      r({ code, signal });
    }),
  );
  return { child, exited, output: () => ({ stdout, stderr, appended }) };
}

/** Every stored run is readable as a strict Run and its journal chain is valid. */
async function checkStore(dir: string) {
  const engine = createEngine({ storage: createFsStorage({ dir }), tools: createToolRegistry() });
  try {
    const records = await engine.listRuns();
    let unfinished = 0;
    let finished = 0;
    for (const record of records) {
      const run = (await engine.getRun(record.id))!; // getRun parses the Run strictly
      expect(run.journal[0]?.event, `run ${run.id} has no run_started`).toBe('run_started');
      verifyJournal(run);
      if (run.journal.at(-1)!.event === 'run_finished') finished++;
      else unfinished++;
    }
    return { runs: records.length, finished, unfinished, engine };
  } catch (err) {
    await engine.dispose();
    throw err;
  }
}

describe('crash safety of storage-fs', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it(`leaves every run readable with a valid chain after ${KILLS} SIGKILLs at random points`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-crash-'));
    dirs.push(dir);
    const seed = testSeed(Number(process.env.FLOWCTL_CRASH_SEED ?? 20261122));
    const random = prng(seed);
    let unfinishedSeen = 0;
    for (let i = 0; i < KILLS; i++) {
      // A 150-step run appends about 350 entries: kill points fall in the first run or the second.
      const killAfter = 1 + below(random, 600);
      const c = spawnChild(dir, [], killAfter);
      const exit = await c.exited;
      const out = c.output();
      expect(exit.signal, `child ${i} (seed ${seed}) ended by itself: ${out.stderr}`).toBe('SIGKILL');
      expect(out.appended, `child ${i} (seed ${seed}) was killed before its kill point (the cap on a hang?)`).toBeGreaterThanOrEqual(killAfter);
      const state = await checkStore(dir);
      await state.engine.dispose();
      unfinishedSeen = Math.max(unfinishedSeen, state.unfinished);
    }
    // The kills did land inside runs (runs left `running`), which is what this test is about.
    expect(unfinishedSeen).toBeGreaterThan(0);

    // Finished runs still replay with verify from the store, and the store takes new runs.
    const state = await checkStore(dir);
    try {
      expect(state.runs).toBeGreaterThanOrEqual(KILLS);
      const finished = (await state.engine.listRuns()).find((r) => r.status === 'succeeded');
      if (finished) {
        const replay = await state.engine.replay({ run_id: finished.id }, { mode: 'verify' });
        expect(replay.status).toBe('succeeded');
      }
    } finally {
      await state.engine.dispose();
    }
    const last = spawnChild(dir, ['--once']);
    expect(await last.exited).toEqual({ code: 0, signal: null });
    expect(last.output().stdout).toContain('done');
  }, 600_000); // a bound for a loaded machine (each kill spawns a node process), not a timing assertion
});
