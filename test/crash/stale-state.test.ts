import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { conformanceId, sampleJournal, sampleRun } from '../../testing/conformance-fixtures.js';
import { createEngine } from '../../src/engine/engine.js';
import type { JournalEntry } from '../../src/run/types.js';
import { fsWrite } from '../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../src/tools/testing-context.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { pidAlive, removeStaleTemps, tempWriterPid } from '../../src/util/atomic-write.js';

/**
 * What a SIGKILL leaves behind, made by hand so every case runs every time:
 * - a run whose journal got run_finished but whose header (run.json) missed its last update;
 * - temp files of writers that died between writing the temp and renaming it.
 */

/** The pid of a process that has exited and been reaped: a dead writer. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.on('close', r));
  return child.pid!;
}

let live: ChildProcess;
beforeAll(async () => {
  // A live writer other than this process: a child that waits on its stdin until we end it.
  live = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] });
  await new Promise((r) => live.once('spawn', r));
});
afterAll(() => {
  live?.stdin?.end();
});

let dir: string;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function storeWithRun(journal: JournalEntry[], header: 'pending' | 'running') {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-stale-'));
  const storage = createFsStorage({ dir });
  await storage.init!();
  const id = conformanceId(1);
  await storage.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
  if (header === 'running') await storage.runs.update(id, { status: 'running' });
  for (const e of journal) await storage.journal.append(id, e);
  // The process is killed here: run_finished is in the journal, the header update never happened.
  return { id, headerFile: join(dir, 'runs', id, 'run.json') };
}

describe('storage-fs: the journal decides a run header that missed its last update', () => {
  it('repairs a header left `running` after run_finished was appended, for get, list and getRun alike', async () => {
    const journal = sampleJournal(4, true);
    const finished = journal[3]!;
    const { id, headerFile } = await storeWithRun(journal, 'running');
    expect(JSON.parse(await readFile(headerFile, 'utf8')).status).toBe('running');

    const fresh = createFsStorage({ dir });
    const listed = await fresh.runs.list();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, status: 'succeeded', finished_at: finished.at, output: { n: 3 } });
    expect(await fresh.runs.get(id)).toEqual(listed[0]);
    // Repaired on disk, so every reader (and an older reader without the repair) agrees from now on.
    const stored = JSON.parse(await readFile(headerFile, 'utf8'));
    expect(stored).toEqual(listed[0]);
    expect(stored.flow_name).toBe('conformance');

    const engine = createEngine({ storage: createFsStorage({ dir }), tools: createToolRegistry() });
    try {
      const run = (await engine.getRun(id))!;
      const [record] = await engine.listRuns();
      expect(run.status).toBe('succeeded');
      expect(record!.status).toBe(run.status);
    } finally {
      await engine.dispose();
    }
  });

  it('repairs a failed run_finished with its error', async () => {
    const journal = sampleJournal(3);
    const error = { code: 'boom', message: 'it broke', retryable: false, step: 's1' };
    const { sealEntry } = await import('../../src/run/journal.js');
    const last = journal[2]!;
    journal.push(
      sealEntry({
        at: '2026-01-01T00:00:09.000Z',
        flow_digest: last.flow_digest,
        inputs_digest: last.inputs_digest,
        seq: 3,
        prev: last.digest,
        event: 'run_finished',
        status: 'failed',
        error,
      }),
    );
    const { id } = await storeWithRun(journal, 'running');
    const record = (await createFsStorage({ dir }).runs.get(id))!;
    expect(record).toMatchObject({ status: 'failed', finished_at: '2026-01-01T00:00:09.000Z', error });
    expect(record.output).toBeUndefined();
  });

  it('reports a run whose header is still `pending` after run_started as `running`', async () => {
    const { id } = await storeWithRun(sampleJournal(2), 'pending');
    const fresh = createFsStorage({ dir });
    expect((await fresh.runs.get(id))!.status).toBe('running');
    expect((await fresh.runs.list())[0]!.status).toBe('running');
  });

  it('leaves a header alone when the journal has no run_finished, and a run with an empty journal pending', async () => {
    const { id, headerFile } = await storeWithRun(sampleJournal(3), 'running');
    const before = await readFile(headerFile, 'utf8');
    expect((await createFsStorage({ dir }).runs.get(id))!.status).toBe('running');
    expect(await readFile(headerFile, 'utf8')).toBe(before);
    await rm(dir, { recursive: true, force: true });
    const empty = await storeWithRun([], 'pending');
    expect((await createFsStorage({ dir }).runs.get(empty.id))!.status).toBe('pending');
  });

  it('finds run_finished behind a torn trailing line and in a journal line larger than one read', async () => {
    const journal = sampleJournal(3);
    const last = journal[2]!;
    const { sealEntry } = await import('../../src/run/journal.js');
    const big = { blob: 'x'.repeat(200_000), n: 'é'.repeat(5000) };
    journal.push(
      sealEntry({
        at: '2026-01-01T00:00:08.000Z',
        flow_digest: last.flow_digest,
        inputs_digest: last.inputs_digest,
        seq: 3,
        prev: last.digest,
        event: 'run_finished',
        status: 'succeeded',
        output: big,
      }),
    );
    const { id } = await storeWithRun(journal, 'running');
    await writeFile(join(dir, 'runs', id, 'journal.jsonl'), '{"torn":', { flag: 'a' });
    expect(await createFsStorage({ dir }).runs.get(id)).toMatchObject({ status: 'succeeded', output: big });
  });
});

describe('stale temp files of dead writers', () => {
  it('parses the writer pid of both temp name styles and nothing else', () => {
    expect(tempWriterPid('.tmp-32336-8-run.json')).toBe(32336);
    expect(tempWriterPid('.f7.txt.32336.8.tmp')).toBe(32336);
    expect(tempWriterPid('.f7.txt.32336.8.tmp', ['prefix'])).toBeUndefined();
    expect(tempWriterPid('.tmp-1-2-x', ['dot'])).toBeUndefined();
    for (const name of ['run.json', 'f7.txt', '.tmp-x-1-a', '.a.b.tmp', 'a.1.2.tmp', '.tmp-0-1-a']) expect(tempWriterPid(name)).toBeUndefined();
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(live.pid!)).toBe(true);
  });

  it("the fs store removes them in every store folder on the next open, never a live writer's", async () => {
    const dead = await deadPid();
    expect(pidAlive(dead)).toBe(false);
    const { id } = await storeWithRun(sampleJournal(4, true), 'running');
    await mkdir(join(dir, 'deploys', 'rest'), { recursive: true });
    const folders = ['specs', 'artifacts', join('deploys', 'rest'), join('runs', id), 'runs'];
    for (const f of folders) {
      await writeFile(join(dir, f, `.tmp-${dead}-7-x.json`), 'half');
      await writeFile(join(dir, f, `.tmp-${live.pid}-7-x.json`), 'being written');
      await writeFile(join(dir, f, `.tmp-${process.pid}-99-x.json`), 'being written here');
    }
    const fresh = createFsStorage({ dir });
    await fresh.init!();
    for (const f of folders) {
      const names = await readdir(join(dir, f));
      expect(names, f).not.toContain(`.tmp-${dead}-7-x.json`);
      expect(names, f).toContain(`.tmp-${live.pid}-7-x.json`);
      expect(names, f).toContain(`.tmp-${process.pid}-99-x.json`);
    }
    expect((await fresh.runs.list()).map((r) => r.id)).toEqual([id]);
  });

  it("fs/write removes the stale temps in the folder it writes to, never a live writer's", async () => {
    const dead = await deadPid();
    dir = await mkdtemp(join(tmpdir(), 'flowctl-stale-'));
    await mkdir(join(dir, 'out'));
    await writeFile(join(dir, 'out', `.f7.txt.${dead}.8.tmp`), 'half');
    await writeFile(join(dir, 'out', `.other.json.${dead}.2.tmp`), 'half');
    await writeFile(join(dir, 'out', `.f7.txt.${live.pid}.9.tmp`), 'being written');
    await writeFile(join(dir, 'out', 'keep.1.2.tmp'), 'a user file');
    await fsWrite.run({ path: 'out/f8.txt', content: 'x' }, createTestToolContext({ cwd: dir }));
    expect((await readdir(join(dir, 'out'))).sort()).toEqual([`.f7.txt.${live.pid}.9.tmp`, 'f8.txt', 'keep.1.2.tmp'].sort());
  });

  it('removeStaleTemps on a missing folder removes nothing', async () => {
    expect(await removeStaleTemps(join(tmpdir(), 'flowctl-no-such-folder-', String(process.pid)))).toEqual([]);
  });
});
