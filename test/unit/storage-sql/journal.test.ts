import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { describeSqlBackends } from './backends.js';
import { chainProblems, journal, journalEntry, runRecord } from './fixtures.js';

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; data: unknown } | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return { code: err.code, data: err.data };
  }
}

/** Collect a watch until it ends; the signal bounds it, so a missing notification fails the test. */
async function collect(iterable: AsyncIterable<JournalEntry>): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const entry of iterable) out.push(entry);
  return out;
}

describeSqlBackends('sql storage: journal', (backend) => {
  it('appends in order and reads back every entry exactly, from any seq', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const entries = journal(5);
    for (const e of entries) await storage.journal.append(run.id, e);
    const back = await storage.journal.read(run.id);
    expect(back).toStrictEqual(entries);
    expect(chainProblems(back)).toEqual([]);
    expect(await storage.journal.read(run.id, 3)).toStrictEqual(entries.slice(3));
    expect(await storage.journal.read(run.id, 9)).toEqual([]);
    expect(await storage.journal.read('00000000-0000-4000-8000-00000000abcd')).toEqual([]);
  });

  it('refuses an append at any seq but the next one with journal_conflict', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const entries = journal(4);
    await storage.journal.append(run.id, entries[0]);
    await storage.journal.append(run.id, entries[1]);
    const behind = await errorOf(storage.journal.append(run.id, journalEntry(1, entries[0].digest, false, { step: 'fork' })));
    expect(behind).toMatchObject({ code: 'journal_conflict', data: { run_id: run.id, seq: 1, length: 2 } });
    const ahead = await errorOf(storage.journal.append(run.id, entries[3]));
    expect(ahead).toMatchObject({ code: 'journal_conflict', data: { seq: 3, length: 2 } });
    expect(await storage.journal.read(run.id)).toStrictEqual(entries.slice(0, 2));
  });

  it('lets exactly one of many concurrent writers of entry N win; the others get journal_conflict', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const first = journalEntry(0, null, false);
    await storage.journal.append(run.id, first);
    const rivals = Array.from({ length: 6 }, (_, i) => journalEntry(1, first.digest, false, { step: `writer-${i}` }));
    const results = await Promise.allSettled(rivals.map((e) => storage.journal.append(run.id, e)));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((r) => (isFlowError(r.reason) ? r.reason.code : String(r.reason)))).toEqual(Array(5).fill('journal_conflict'));
    const back = await storage.journal.read(run.id);
    expect(back).toHaveLength(2);
    expect(rivals.map((r) => r.digest)).toContain(back[1].digest);
  });

  it('refuses entries of unknown runs (not_found) and entries with a bad seq (invalid_record)', async () => {
    const storage = await backend.create();
    expect((await errorOf(storage.journal.append('00000000-0000-4000-8000-00000000abcd', journalEntry(0, null, false))))?.code).toBe('not_found');
    const run = runRecord();
    await storage.runs.create(run);
    expect((await errorOf(storage.journal.append(run.id, { ...journalEntry(0, null, false), seq: -1 })))?.code).toBe('invalid_record');
    expect((await errorOf(storage.journal.append(run.id, { ...journalEntry(0, null, false), seq: 0.5 })))?.code).toBe('invalid_record');
  });

  it('stores entries as jsonb an independent reader can query', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    for (const e of journal(3)) await storage.journal.append(run.id, e);
    const rows = await sql<{ seq: number; event: string; type: string }>`
      select seq, entry->>'event' as event, jsonb_typeof(entry) as type
      from ${sql.table(`${storage.schema}.journal`)} where run_id = ${run.id} order by seq`.execute(storage.db);
    expect(rows.rows).toEqual([
      { seq: 0, event: 'run_started', type: 'object' },
      { seq: 1, event: 'step_skipped', type: 'object' },
      { seq: 2, event: 'run_finished', type: 'object' },
    ]);
  });

  it('watch yields stored entries, then live appends, and ends after run_finished', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const entries = journal(6);
    await storage.journal.append(run.id, entries[0]);
    await storage.journal.append(run.id, entries[1]);
    const seen: JournalEntry[] = [];
    const watching = (async () => {
      for await (const e of storage.journal.watch(run.id, { signal: AbortSignal.timeout(20_000) })) {
        seen.push(e);
        // Append the next entry only once the previous one was seen: each step needs a live wake-up.
        const next = entries[e.seq + 1];
        if (next && e.seq >= 1) await storage.journal.append(run.id, next);
      }
    })();
    await watching;
    expect(seen).toStrictEqual(entries);
  });

  it('watch from a seq skips earlier entries; past the end of a finished journal it ends at once', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const entries = journal(4);
    for (const e of entries) await storage.journal.append(run.id, e);
    expect(await collect(storage.journal.watch(run.id, { fromSeq: 2, signal: AbortSignal.timeout(20_000) }))).toStrictEqual(entries.slice(2));
    expect(await collect(storage.journal.watch(run.id, { fromSeq: 4, signal: AbortSignal.timeout(20_000) }))).toEqual([]);
  });

  it('watch ends when its signal aborts, and two watchers of one run both see every entry', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const entries = journal(3);
    await storage.journal.append(run.id, entries[0]);
    const controller = new AbortController();
    const a: JournalEntry[] = [];
    const b: JournalEntry[] = [];
    const watchA = (async () => {
      for await (const e of storage.journal.watch(run.id, { signal: controller.signal })) {
        a.push(e);
        if (a.length === 2) controller.abort();
      }
    })();
    const watchB = collect(storage.journal.watch(run.id, { signal: AbortSignal.timeout(20_000) })).then((x) => b.push(...x));
    await storage.journal.append(run.id, entries[1]);
    await watchA;
    expect(a).toStrictEqual(entries.slice(0, 2));
    await storage.journal.append(run.id, entries[2]);
    await watchB;
    expect(b).toStrictEqual(entries);
  });

  it('a watcher on another storage of the same database sees appends', async () => {
    const writer = await backend.create();
    const reader = await backend.create({ schema: writer.schema });
    const run = runRecord();
    await writer.runs.create(run);
    const entries = journal(3);
    const watched = collect(reader.journal.watch(run.id, { signal: AbortSignal.timeout(20_000) }));
    // watch subscribes before its first read, so appends made before or after it goes live are all seen.
    for (const e of entries) await writer.journal.append(run.id, e);
    expect(await watched).toStrictEqual(entries);
  });
});
