import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { verifyJournal } from '../../src/run/fixture.js';
import type { JournalEntry } from '../../src/run/types.js';
import { bundleChildScript, describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';
import { FLOW_DIGEST, runRecord } from '../unit/storage-sql/fixtures.js';

const WRITERS = 8;
const RUNS = 200;
const ENTRIES = 6; // run_started, 4 steps, run_finished

/**
 * One writer process. All writers walk the same 200 runs in the same order and race to append the
 * next entry of each (read the journal, seal the next entry on its tail, append at that seq); a lost
 * race is a journal_conflict, after which the writer re-reads. Every read is checked for gaps and a
 * broken chain. Once a run is finished, the writer tries a stale append (a fork of entry 1), which
 * must fail with journal_conflict.
 */
const WRITER_SOURCE = `
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createSqlStorage } from '@root/adapters/storage-sql/index.ts';
import { sealEntry, checkJournalChain } from '@root/src/run/journal.ts';

const [url, schema, writer, runsFile, total] = process.argv.slice(2);
const runIds = JSON.parse(readFileSync(runsFile, 'utf8'));
const storage = createSqlStorage({ databaseUrl: url, schema, poolSize: 2 });
await storage.init();
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\\n');
await new Promise((r) => lines.once('line', r));

const stats = { appended: 0, conflicts: 0, stale_conflicts: 0, reads: 0, problems: [] };
const base = (seq, prev) => ({ at: new Date(0).toISOString(), flow_digest: ${JSON.stringify(FLOW_DIGEST)}, inputs_digest: ${JSON.stringify(FLOW_DIGEST)}, seq, prev });
const next = (seq, prev) => {
  if (seq === 0) return sealEntry({ ...base(0, null), event: 'run_started', flow_name: 'race', inputs: {}, contracts: [] });
  if (seq === Number(total) - 1) return sealEntry({ ...base(seq, prev), event: 'run_finished', status: 'succeeded', output: { by: writer } });
  return sealEntry({ ...base(seq, prev), event: 'step_skipped', step: 's' + seq, reason: 'writer ' + writer });
};
for (const runId of runIds) {
  for (let attempt = 0; attempt < 500; attempt++) {
    const journal = await storage.journal.read(runId);
    stats.reads++;
    try { checkJournalChain(journal); } catch (err) { stats.problems.push(runId + ': ' + err.message); }
    if (journal.at(-1)?.event === 'run_finished') break;
    try {
      await storage.journal.append(runId, next(journal.length, journal.at(-1)?.digest ?? null));
      stats.appended++;
    } catch (err) {
      if (err.code === 'journal_conflict') stats.conflicts++;
      else stats.problems.push(runId + ': append failed with ' + err.code + ' ' + err.message);
    }
  }
  const fork = { ...next(1, (await storage.journal.read(runId, 0))[0].digest), reason: 'stale fork' };
  try {
    await storage.journal.append(runId, fork);
    stats.problems.push(runId + ': a stale append at seq 1 succeeded');
  } catch (err) {
    if (err.code === 'journal_conflict') stats.stale_conflicts++;
    else stats.problems.push(runId + ': stale append failed with ' + err.code);
  }
}
await storage.dispose();
process.stdout.write(JSON.stringify(stats) + '\\n');
lines.close();
`;

/** Lines of a child's stdout, one at a time; fails (instead of waiting forever) once stdout closes. */
function lineReader(child: ChildProcess, stderr: () => string): { next(): Promise<string> } {
  const queue: string[] = [];
  const waiters: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  let buffer = '';
  let closed = false;
  const gone = () => new Error(`writer ${child.pid} exited (code ${child.exitCode}) before printing a line:\n${stderr()}`);
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      const waiter = waiters.shift();
      if (waiter) waiter.resolve(line);
      else queue.push(line);
    }
  });
  child.on('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w.reject(gone());
  });
  return {
    next: () =>
      queue.length ? Promise.resolve(queue.shift()!) : closed ? Promise.reject(gone()) : new Promise((resolve, reject) => waiters.push({ resolve, reject })),
  };
}

describePostgres('sql storage: 8 processes race on 200 runs (Postgres)', (url) => {
  const schema = uniqueSchemaName('flowctl_race');
  let dir: string;
  let storage: SqlStorage;
  let writerScript: string;
  const runIds: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-sql-race-'));
    storage = createSqlStorage({ databaseUrl: url, schema });
    for (let i = 0; i < RUNS; i++) {
      const run = runRecord({ flow_digest: FLOW_DIGEST, flow_name: 'race' });
      await storage.runs.create(run);
      runIds.push(run.id);
    }
    await writeFile(join(dir, 'runs.json'), JSON.stringify(runIds));
    writerScript = await bundleChildScript('sql-race-writer', WRITER_SOURCE);
  });

  afterAll(async () => {
    await storage?.dispose();
    await dropSchema(url, schema);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (writerScript) await rm(writerScript, { force: true });
  });

  it('keeps every journal gap-free with a verifying chain; lost races fail with journal_conflict', { timeout: 300_000 }, async () => {
    const children = Array.from({ length: WRITERS }, (_, writer) =>
      spawn(process.execPath, [writerScript, url, schema, String(writer), join(dir, 'runs.json'), String(ENTRIES)], {
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    const stderr: string[] = children.map(() => '');
    children.forEach((c, i) => c.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr[i] += d)));
    const exits = children.map((c) => once(c, 'exit') as Promise<[number | null, NodeJS.Signals | null]>);
    const kill = setTimeout(() => children.forEach((c) => c.kill('SIGKILL')), 280_000);
    try {
      const readers = children.map((c, i) => lineReader(c, () => stderr[i]));
      // Barrier: every writer is connected and migrated before any of them starts appending.
      const ready = await Promise.all(readers.map((r) => r.next()));
      expect(ready).toEqual(Array(WRITERS).fill('ready'));

      // Meanwhile this process watches a few runs: a cross-process watch must see every entry in order.
      const watched = runIds.slice(0, 3).map(async (runId) => {
        const seen: JournalEntry[] = [];
        for await (const e of storage.journal.watch(runId, { signal: AbortSignal.timeout(250_000) })) seen.push(e);
        return seen;
      });
      for (const c of children) c.stdin!.write('go\n');

      const stats = (await Promise.all(readers.map((r) => r.next()))).map((line) => JSON.parse(line));
      const codes = await Promise.all(exits);
      expect(
        codes.map(([code]) => code),
        stderr.join('\n'),
      ).toEqual(Array(WRITERS).fill(0));
      expect(stats.flatMap((s) => s.problems)).toEqual([]);
      expect(stats.reduce((n, s) => n + s.appended, 0)).toBe(RUNS * ENTRIES);
      expect(stats.reduce((n, s) => n + s.stale_conflicts, 0)).toBe(RUNS * WRITERS);
      const conflicts = stats.reduce((n, s) => n + s.conflicts, 0);
      process.stderr.write(
        `[sql-race] ${WRITERS} writers, ${RUNS} runs: ${RUNS * ENTRIES} appends, ${conflicts} lost races, reads ${stats.reduce((n, s) => n + s.reads, 0)}\n`,
      );

      // Independent read: the rows themselves, straight from Postgres.
      const rows = await pgQuery<{ run_id: string; seq: number; entry: JournalEntry }>(
        url,
        `select run_id, seq, entry from "${schema}".journal order by run_id, seq`,
      );
      expect(rows).toHaveLength(RUNS * ENTRIES);
      const byRun = new Map<string, JournalEntry[]>();
      for (const row of rows) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), row.entry]);
      expect(byRun.size).toBe(RUNS);
      for (const [runId, journal] of byRun) {
        expect(
          journal.map((e) => e.seq),
          runId,
        ).toEqual([...Array(ENTRIES).keys()]);
        expect(() => verifyJournal({ journal, flow_digest: FLOW_DIGEST })).not.toThrow();
        expect(journal.at(-1)?.event).toBe('run_finished');
      }
      const seen = await Promise.all(watched);
      for (const [i, journal] of seen.entries()) expect(journal).toEqual(byRun.get(runIds[i]));
    } finally {
      clearTimeout(kill);
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    }
  });
});
