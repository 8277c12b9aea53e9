import { spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { conformanceId, sampleJournal, sampleRun } from '../../testing/conformance-fixtures.js';

/**
 * A writer killed between claiming a seq and writing its line (made by hand, so every case runs every
 * time). Its claim names it; once it is gone, the seq is taken over (recovery can close the run), and
 * only then: a live writer's claim, another host's and a claim naming no writer still conflict.
 */
describe('storage-fs: a claim abandoned by a dead writer', () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  // A pid that existed and is gone: a child that ran and was reaped.
  const deadPid = (() => {
    const child = spawnSync(process.execPath, ['-e', '']);
    return child.pid!;
  })();

  async function storeWith(entries: number, claim: unknown, torn: boolean) {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-claim-'));
    const storage = createFsStorage({ dir });
    await storage.init!();
    const id = conformanceId(1);
    await storage.runs.create(sampleRun(id, '2026-01-01T00:00:00.000Z'));
    const journal = sampleJournal(4);
    for (const e of journal.slice(0, entries)) await storage.journal.append(id, e);
    await storage.dispose?.();
    await writeFile(join(dir, 'runs', id, 'claims', String(entries)), typeof claim === 'string' ? claim : JSON.stringify(claim));
    if (torn) await appendFile(join(dir, 'runs', id, 'journal.jsonl'), JSON.stringify(journal[entries]).slice(0, 40));
    return { id, journal };
  }

  it('is taken over once its writer is dead: the torn line is cut and the journal continues', async () => {
    const { id, journal } = await storeWith(2, { pid: deadPid, host: hostname() }, true);
    const fresh = createFsStorage({ dir });
    await fresh.journal.append(id, journal[2]!);
    await fresh.journal.append(id, journal[3]!);
    await fresh.dispose?.();
    expect(await createFsStorage({ dir }).journal.read(id)).toEqual(journal);
    // The seq was claimed by the next generation; no temp of a claim is left behind once the store is disposed.
    expect((await readdir(join(dir, 'runs', id, 'claims'))).sort()).toEqual(['0', '1', '2', '2.1', '3']);
    // A second taker of the same seq conflicts: the entry is there now.
    await expect(createFsStorage({ dir }).journal.append(id, journal[2]!)).rejects.toMatchObject({ code: 'journal_conflict' });
  });

  it("is not taken over while its writer lives, when it is another host's, or when it names no writer", async () => {
    for (const claim of [{ pid: process.pid, host: hostname() }, { pid: deadPid, host: `${hostname()}-other` }, '']) {
      const { id, journal } = await storeWith(2, claim, false);
      await expect(createFsStorage({ dir }).journal.append(id, journal[2]!)).rejects.toMatchObject({ code: 'journal_conflict' });
      expect(await createFsStorage({ dir }).journal.read(id)).toEqual(journal.slice(0, 2));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
