import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { conformanceId, sampleJournal, sampleRun } from '../../testing/conformance-fixtures.js';

/**
 * storage-fs keeps unfinished/<id>/ for every run not finished (fs-unfinished.ts): recovery's list of
 * pending and running runs reads those only, and must list exactly what reading every run lists.
 */
describe('storage-fs: the unfinished-runs index', () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const UNFINISHED = { status: ['pending', 'running'] as ('pending' | 'running')[] };
  const index = async () => (await readdir(join(dir, 'unfinished'))).sort();
  /** The runs a full read lists as pending or running (a list whose statuses include a terminal one reads every run). */
  const fullScan = async (s: Storage) =>
    (await s.runs.list({ status: ['pending', 'running', 'failed'] })).filter((r) => r.status !== 'failed').map((r) => r.id);

  /** Five runs in five states: pending, running, finished and updated, finished with a stale header, and one whose folder was removed. */
  async function fiveRuns(storage: Storage) {
    const ids = [1, 2, 3, 4, 5].map(conformanceId);
    for (const [i, id] of ids.entries()) await storage.runs.create(sampleRun(id, `2026-01-01T00:00:0${i}.000Z`));
    await storage.journal.append(ids[1]!, sampleJournal(1)[0]!);
    for (const e of sampleJournal(3, true)) await storage.journal.append(ids[2]!, e);
    await storage.runs.update(ids[2]!, { status: 'succeeded', finished_at: '2026-01-01T00:00:02.000Z' });
    // Killed between run_finished and the header's update: the header says running, the journal is done.
    for (const e of sampleJournal(3, true)) await storage.journal.append(ids[3]!, e);
    await rm(join(dir, 'runs', ids[4]!), { recursive: true });
    return ids;
  }

  it('lists what a full read lists, and lets a run go once it reads terminal', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-unfinished-'));
    const storage = createFsStorage({ dir });
    await storage.init!();
    const ids = await fiveRuns(storage);
    // The terminal update let its run go at once; the others wait for a list to read them.
    expect(await index()).toEqual([ids[0], ids[1], ids[3], ids[4]].sort());
    const listed = (await storage.runs.list(UNFINISHED)).map((r) => r.id);
    expect(listed).toEqual([ids[1], ids[0]]);
    expect(listed).toEqual(await fullScan(storage));
    // The stale header was repaired to succeeded and the removed run forgotten: only the two unfinished stay.
    expect(await index()).toEqual([ids[0], ids[1]].sort());
    expect(await storage.runs.get(ids[3]!)).toMatchObject({ status: 'succeeded' });
    // A run created terminal (an import) is never indexed; one created pending is.
    await storage.runs.create({ ...sampleRun(conformanceId(6), '2026-01-01T00:00:06.000Z'), status: 'failed' });
    expect(await index()).toEqual([ids[0], ids[1]].sort());
  });

  it('is built at the first init of a store made without it, with only the runs not finished', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-unfinished-'));
    // A store as an older flowctl left it: the same runs, no unfinished/ folder.
    const old = createFsStorage({ dir });
    await old.init!();
    const ids = await fiveRuns(old);
    await rm(join(dir, 'unfinished'), { recursive: true });
    const opened = createFsStorage({ dir });
    await opened.init!();
    expect(await index()).toEqual([ids[0], ids[1]].sort());
    expect((await opened.runs.list(UNFINISHED)).map((r) => r.id)).toEqual([ids[1], ids[0]]);
    // Nothing of the build is left beside it; a second open keeps the index as it is.
    expect((await readdir(dir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    await createFsStorage({ dir }).init!();
    expect(await index()).toEqual([ids[0], ids[1]].sort());
  });
});
