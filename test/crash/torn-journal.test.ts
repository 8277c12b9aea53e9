import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { sampleJournal, sampleRun, conformanceId } from '../../testing/conformance-fixtures.js';

/** What a process killed mid-write leaves behind, made by hand so every case runs every time. */
describe('storage-fs after a crash', () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function storeWith(entries: number) {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-torn-'));
    const storage = createFsStorage({ dir });
    await storage.init!();
    const id = conformanceId(1);
    await storage.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
    const journal = sampleJournal(4);
    for (const e of journal.slice(0, entries)) await storage.journal.append(id, e);
    return { storage, id, journal, file: join(dir, 'runs', id, 'journal.jsonl') };
  }

  it('ignores a torn trailing line, and the writer that tore it cannot be continued or forked', async () => {
    const { storage, id, journal, file } = await storeWith(2);
    // The writer claimed seq 2 and died halfway through its line.
    await writeFile(join(dir, 'runs', id, 'claims', '2'), '');
    await appendFile(file, JSON.stringify(journal[2]).slice(0, 40));
    const fresh = createFsStorage({ dir });
    expect(await fresh.journal.read(id)).toEqual(journal.slice(0, 2));
    await expect(fresh.journal.append(id, journal[2]!)).rejects.toMatchObject({ code: 'journal_conflict' });
    await expect(fresh.journal.append(id, journal[3]!)).rejects.toMatchObject({ code: 'journal_conflict' });
    expect(await createFsStorage({ dir }).journal.read(id)).toEqual(journal.slice(0, 2));
    await storage.dispose?.();
  });

  it('treats a run directory without run.json (killed inside create) as no run', async () => {
    const { id } = await storeWith(1);
    await mkdir(join(dir, 'runs', conformanceId(2)));
    await writeFile(join(dir, 'runs', `${conformanceId(3)}.tmp-left-over`), 'x');
    const fresh = createFsStorage({ dir });
    expect((await fresh.runs.list()).map((r) => r.id)).toEqual([id]);
    expect(await fresh.runs.get(conformanceId(2))).toBeUndefined();
  });

  it('reports a corrupt complete line instead of skipping it', async () => {
    const { id, file } = await storeWith(2);
    await appendFile(file, '{not json}\n');
    await expect(createFsStorage({ dir }).journal.read(id)).rejects.toMatchObject({ code: 'storage_corrupt' });
  });
});
