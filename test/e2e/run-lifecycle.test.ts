import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { verifyJournal } from '../../src/run/fixture.js';
import type { JournalEntry } from '../../src/run/types.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';
import { lifecycleSpec, lifecycleTools } from './run-lifecycle-tools.js';

// A SIGKILLed executor process recovered by lease (runs by id across instances, cancel and a stalled
// executor are the flowctl/testing run-lifecycle suite: test/conformance/run-lifecycle.test.ts) (docs/journal.md, "Leases and recovery"). Everything
// waits on events (journal entries, process output and exit); caps only end a hang.

const LEASE_MS = 300;
let tmp: string;
let childScript: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'flowctl-lifecycle-'));
  // Under node_modules, so the bundle's bare imports (kysely, pg, PGlite) resolve to the package's own.
  childScript = resolve(import.meta.dirname, '../../node_modules/.cache', `flowctl-lifecycle-child-${process.pid}.mjs`);
  await build({
    entryPoints: [resolve(import.meta.dirname, 'run-lifecycle-child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: childScript,
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
  await rm(childScript, { force: true });
});

async function collect(iter: AsyncIterable<JournalEntry>): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of iter) {
    out.push(e);
    if (out.length > 1000) throw new Error('watch did not end');
  }
  return out;
}

/** A child executing `runId`; `started` resolves when it printed `step wait`, `exited` on exit. */
function spawnExecutor(runId: string, store: string[]) {
  const child = spawn(process.execPath, [childScript, runId, String(LEASE_MS), ...store], {
    cwd: resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const cap = setTimeout(() => child.kill('SIGKILL'), 300_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => (clearTimeout(cap), r({ code, signal }))),
  );
  const started = new Promise<void>((resolveStarted, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('step wait\n')) resolveStarted();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    void exited.then(() => reject(new Error(`the executor exited before its step started: ${out}${err}`)));
  });
  return { child, started, exited };
}

describe('a SIGKILLed executor (PGlite data folder): recovered as worker_lost', () => {
  it('after the kill, the next engine over the folder ends the run failed worker_lost within a lease and a sweep', async () => {
    const dataDir = join(tmp, 'pglite-data');
    const first = createEngine({ storage: createSqlStorage({ pglite: { dataDir } }), tools: lifecycleTools(), leaseMs: LEASE_MS });
    const { run_id } = await first.prepare({ spec: lifecycleSpec(true) }, { who: 'org-a' });
    await first.dispose(); // PGlite: one process per data folder
    const executor = spawnExecutor(run_id, ['pglite', dataDir]);
    await executor.started;
    executor.child.kill('SIGKILL');
    expect((await executor.exited).signal).toBe('SIGKILL');
    const engine = createEngine({ storage: createSqlStorage({ pglite: { dataDir } }), tools: lifecycleTools(), leaseMs: LEASE_MS, sweepMs: LEASE_MS });
    try {
      const entries = await collect(engine.watch(run_id));
      expect(entries.at(-1)).toMatchObject({ event: 'run_finished', status: 'failed', error: { code: 'worker_lost', step: 'wait' } });
      const run = (await engine.getRun(run_id))!;
      expect(run.status).toBe('failed');
      expect(() => verifyJournal(run)).not.toThrow();
      expect((await engine.listRuns({ status: ['pending', 'running'] })).map((r) => r.id)).toEqual([]);
      const replay = await engine.replay({ run_id }, { mode: 'verify' });
      expect(replay.status).toBe('failed');
      expect(replay.journal.at(-1)).toMatchObject({ event: 'run_finished', error: { code: 'worker_lost' } });
    } finally {
      await engine.dispose();
    }
  });
});

describePostgres('runs by id on Postgres', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  it('two processes: this one prepares, a child process executes by id, this one watches to the end and reads the result', async () => {
    const twoSchema = uniqueSchemaName();
    schemas.push(twoSchema);
    const engine = createEngine({
      storage: createSqlStorage({ databaseUrl: url, schema: twoSchema, poolSize: 2 }),
      tools: lifecycleTools(),
      leaseMs: LEASE_MS,
    });
    try {
      const { run_id, status } = await engine.prepare({ spec: lifecycleSpec(false) }, { who: 'org-two' });
      expect(status).toBe('pending');
      const watched = collect(engine.watch(run_id));
      watched.catch(() => undefined); // awaited below
      const child = spawn(process.execPath, [childScript, run_id, String(LEASE_MS), 'postgres', url, twoSchema], {
        cwd: resolve(import.meta.dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const cap = setTimeout(() => child.kill('SIGKILL'), 300_000);
      const code = await new Promise<number | null>((r) => child.on('exit', (c) => (clearTimeout(cap), r(c))));
      expect(code, out).toBe(0);
      expect(out).toContain('finished succeeded');
      const entries = await watched;
      expect(entries.map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_succeeded', 'run_finished']);
      const run = (await engine.getRun(run_id))!;
      expect(run).toMatchObject({ status: 'succeeded', output: 'org-two' });
      expect(() => verifyJournal(run)).not.toThrow();
    } finally {
      await engine.dispose();
    }
  });

  it('a SIGKILLed executor process: the run ends failed worker_lost, the watch ends, replay reports it', async () => {
    const killSchema = uniqueSchemaName();
    schemas.push(killSchema);
    const engine = createEngine({
      storage: createSqlStorage({ databaseUrl: url, schema: killSchema, poolSize: 2 }),
      tools: lifecycleTools(),
      leaseMs: LEASE_MS,
      sweepMs: LEASE_MS,
    });
    try {
      const { run_id } = await engine.prepare({ spec: lifecycleSpec(true) }, { who: 'org-b' });
      const executor = spawnExecutor(run_id, ['postgres', url, killSchema]);
      const watched = collect(engine.watch(run_id));
      watched.catch(() => undefined); // awaited below; a failure before that must not go unhandled
      await executor.started;
      executor.child.kill('SIGKILL');
      expect((await executor.exited).signal).toBe('SIGKILL');
      const entries = await watched;
      expect(entries.map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_succeeded', 'step_started', 'run_finished']);
      expect(entries.at(-1)).toMatchObject({ status: 'failed', error: { code: 'worker_lost', step: 'wait' } });
      const run = (await engine.getRun(run_id))!;
      expect(run.status).toBe('failed');
      expect(() => verifyJournal(run)).not.toThrow();
      expect((await engine.replay({ run_id }, { mode: 'verify' })).status).toBe('failed');
    } finally {
      await engine.dispose();
    }
  });
});
