import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { conformanceId, sampleJournal, sampleRun } from '../../testing/conformance-fixtures.js';

/**
 * Each seq's claim is a hard link to one claim source per run and writer (fs-journal.ts): every claim
 * still names its writer whole, the source is removed after run_finished (or at dispose), and a run
 * folder removed under a writer that kept its source is claimed again without an error.
 */
describe('storage-fs: claims linked from one source per run', () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function fresh() {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-claim-source-'));
    const storage = createFsStorage({ dir });
    await storage.init!();
    return storage;
  }

  it('names the writer in every claim and leaves no temp once the run is finished', async () => {
    const storage = await fresh();
    const id = conformanceId(1);
    await storage.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
    const journal = sampleJournal(5, true);
    for (const e of journal.slice(0, 3)) await storage.journal.append(id, e);
    const claims = join(dir, 'runs', id, 'claims');
    const during = (await readdir(claims)).sort();
    // While the run is open here: three claims and the one source they are linked from.
    expect(during.filter((n) => !n.startsWith('.tmp-'))).toEqual(['0', '1', '2']);
    expect(during.filter((n) => n.startsWith('.tmp-'))).toHaveLength(1);
    expect((await stat(join(claims, '0'))).nlink).toBe(4);
    for (const e of journal.slice(3)) await storage.journal.append(id, e);
    expect((await readdir(claims)).sort()).toEqual(['0', '1', '2', '3', '4']);
    for (const n of ['0', '4']) expect(JSON.parse(await readFile(join(claims, n), 'utf8'))).toEqual({ pid: process.pid, host: hostname() });
    expect(await createFsStorage({ dir }).journal.read(id)).toEqual(journal);
  });

  it('removes the sources of unfinished runs at dispose, and claims again after the run folder was removed', async () => {
    const storage = await fresh();
    const id = conformanceId(2);
    await storage.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
    const journal = sampleJournal(3);
    await storage.journal.append(id, journal[0]!);
    // Removed and made again (another store's cleanup, a test's reset): the kept source is gone too.
    await rm(join(dir, 'runs', id), { recursive: true });
    const other = createFsStorage({ dir });
    await other.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
    await other.journal.append(id, journal[0]!);
    await other.dispose?.();
    await storage.journal.append(id, journal[1]!);
    await storage.journal.append(id, journal[2]!);
    await storage.dispose!();
    expect((await readdir(join(dir, 'runs', id, 'claims'))).sort()).toEqual(['0', '1', '2']);
    expect(await createFsStorage({ dir }).journal.read(id)).toEqual(journal);
  });
});
