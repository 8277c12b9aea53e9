import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { verifyJournal } from '../../src/run/fixture.js';
import { bundleChildScript } from '../helpers/postgres.js';
import { FLOW_DIGEST } from '../unit/storage-sql/fixtures.js';

const ENTRIES = 4;
const KILL_AFTER = 15; // committed runs before the SIGKILL

/**
 * Writes runs to PGlite in a data folder until killed: create the run, append its journal, mark it
 * succeeded, then print `committed <id>`. The kill lands wherever the writer happens to be.
 */
const WRITER_SOURCE = `
import { randomUUID } from 'node:crypto';
import { createSqlStorage } from '@root/adapters/storage-sql/index.ts';
import { sealEntry } from '@root/src/run/journal.ts';

const storage = createSqlStorage({ pglite: { dataDir: process.argv[2] } });
await storage.init();
process.stdout.write('open\\n');
const flow_digest = ${JSON.stringify(FLOW_DIGEST)};
for (let n = 0; n < 100000; n++) {
  const id = randomUUID();
  const t = (s) => new Date(Date.UTC(2026, 0, 1, 0, 0, n % 60, s)).toISOString();
  await storage.runs.create({ id, flow_digest, flow_name: 'restart', status: 'running', started_at: t(0) });
  let prev = null;
  for (let seq = 0; seq < ${ENTRIES}; seq++) {
    const base = { at: t(seq), flow_digest, inputs_digest: flow_digest, seq, prev };
    const entry = seq === 0
      ? sealEntry({ ...base, event: 'run_started', flow_name: 'restart', inputs: { n }, contracts: [] })
      : seq === ${ENTRIES - 1}
        ? sealEntry({ ...base, event: 'run_finished', status: 'succeeded', output: { n } })
        : sealEntry({ ...base, event: 'step_skipped', step: 's' + seq, reason: 'restart test' });
    await storage.journal.append(id, entry);
    prev = entry.digest;
  }
  await storage.runs.update(id, { status: 'succeeded', finished_at: t(${ENTRIES}), output: { n } });
  process.stdout.write('committed ' + id + '\\n');
}
`;

describe('sql storage: PGlite survives SIGKILL', () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-sql-restart-'));
    script = await bundleChildScript('sql-restart-writer', WRITER_SOURCE);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    if (script) await rm(script, { force: true });
  });

  it('reads back every committed run intact after the writer is killed mid-write', { timeout: 240_000 }, async () => {
    const dataDir = join(dir, 'db');
    const child = spawn(process.execPath, [script, dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const committed: string[] = [];
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    // Bound: first open of a new PGlite folder runs initdb (seconds); the writer is killed after 200 s at worst.
    const guard = setTimeout(() => child.kill('SIGKILL'), 200_000);
    await new Promise<void>((resolve) => {
      let buffer = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) if (line.startsWith('committed ')) committed.push(line.slice('committed '.length));
        if (committed.length >= KILL_AFTER && child.exitCode === null && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
    });
    const [code, signal] = await exited;
    clearTimeout(guard);
    expect({ code, signal, stderr }).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(committed.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(existsSync(`${dataDir}.lock`)).toBe(true); // left behind by the killed writer

    // Restart: a new process view of the same folder takes over the dead writer's lock.
    const storage = createSqlStorage({ pglite: { dataDir } });
    try {
      for (const id of committed) {
        const run = await storage.runs.get(id);
        expect(run, id).toMatchObject({ id, status: 'succeeded', flow_digest: FLOW_DIGEST, flow_name: 'restart' });
        expect(run?.finished_at).toMatch(/^2026-01-01T00:00:\d{2}\.004Z$/);
        const journal = await storage.journal.read(id);
        expect(journal.map((e) => e.seq)).toEqual([...Array(ENTRIES).keys()]);
        expect(() => verifyJournal({ journal, flow_digest: FLOW_DIGEST })).not.toThrow();
        expect(journal.at(-1)).toMatchObject({ event: 'run_finished', output: run?.output });
      }
      // Runs the writer got further with (their lines still in the pipe, or the one the kill
      // interrupted) are consistent prefixes: no gaps, no torn entries.
      const all = await storage.runs.list();
      expect(all.length).toBeGreaterThanOrEqual(committed.length);
      for (const run of all) {
        const journal = await storage.journal.read(run.id);
        expect(journal.map((e) => e.seq)).toEqual([...Array(journal.length).keys()]);
        expect(() => verifyJournal({ journal, flow_digest: FLOW_DIGEST })).not.toThrow();
      }
    } finally {
      await storage.dispose();
    }
  });
});
