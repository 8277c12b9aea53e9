import { sql } from 'kysely';
import { FlowError, prefixed } from '../../src/errors.js';
import type { JournalStore } from '../../src/ports/storage.js';
import type { JournalEntry } from '../../src/run/types.js';
import type { SqlContext } from './sql-context.js';
import { constraintOf, errorCode } from './sql-errors.js';
import { jsonb, parseStoredJson } from './sql-values.js';

function conflict(runId: string, seq: number, length: number | undefined): FlowError {
  const where = length === undefined ? 'another writer appended it first' : `the journal has ${length} entries`;
  return new FlowError('journal_conflict', prefixed('storage-sql', `run ${runId}: cannot append seq ${seq}: ${where}`), {
    data: { run_id: runId, seq, length },
  });
}

export function sqlJournalStore(ctx: SqlContext): JournalStore {
  const read = (runId: string, fromSeq = 0) =>
    ctx.guard('journal.read', async () => {
      const rows = await ctx.db
        .selectFrom('journal')
        .select(sql<string>`entry::text`.as('entry'))
        .where('run_id', '=', runId)
        .where('seq', '>=', fromSeq)
        .orderBy('seq')
        .execute();
      return rows.map((r) => parseStoredJson(r.entry) as JournalEntry);
    });

  const length = (runId: string) =>
    ctx.db
      .selectFrom('journal')
      .select(sql<number>`coalesce(max(seq) + 1, 0)`.as('n'))
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));

  /** A watcher that starts past the end of a finished journal has nothing to wait for. */
  const finishedBefore = (runId: string, seq: number) =>
    ctx.guard('journal.watch', async () => {
      const row = await ctx.db
        .selectFrom('journal')
        .select('seq')
        .where('run_id', '=', runId)
        .where('seq', '<', seq)
        .where(sql<boolean>`entry->>'event' = 'run_finished'`)
        .executeTakeFirst();
      return row !== undefined;
    });

  return {
    append: (runId, entry) =>
      ctx.guard('journal.append', async () => {
        const seq = entry.seq;
        if (!Number.isSafeInteger(seq) || seq < 0) {
          throw new FlowError('invalid_record', prefixed('storage-sql', `run ${runId}: entry seq must be a non-negative integer, got ${seq}`));
        }
        // One statement, so one transaction: insert only at the current length, and NOTIFY, which
        // Postgres delivers on commit. Two writers of entry N both pass the length check; the primary
        // key (run_id, seq) makes the second one fail, so the journal never forks.
        let inserted: number;
        try {
          const rows = await ctx.db
            .with('ins', (db) =>
              db
                .insertInto('journal')
                .columns(['run_id', 'seq', 'entry'])
                .expression(
                  db
                    .selectNoFrom([
                      sql<string>`${runId}::text`.as('run_id'),
                      sql<number>`${seq}::integer`.as('seq'),
                      jsonb(entry).as('entry'),
                    ])
                    .where((eb) =>
                      eb(
                        eb.fn.coalesce(
                          eb
                            .selectFrom('journal as j')
                            .select(sql<number>`max(j.seq) + 1`.as('n'))
                            .where('j.run_id', '=', runId),
                          sql.lit(0),
                        ),
                        '=',
                        seq,
                      ),
                    ),
                )
                .returning('seq'),
            )
            .selectFrom('ins')
            .select(sql<string>`pg_notify(${ctx.channel}, ${runId} || ':' || ins.seq)`.as('notified'))
            .execute();
          inserted = rows.length;
        } catch (err) {
          if (errorCode(err) === '23505' && constraintOf(err) === 'journal_pkey') throw conflict(runId, seq, undefined);
          if (errorCode(err) === '23503') {
            throw new FlowError('not_found', prefixed('storage-sql', `run ${runId} not found: create the run before appending to its journal`), {
              data: { run_id: runId },
            });
          }
          throw err;
        }
        if (inserted === 0) throw conflict(runId, seq, await length(runId));
      }),

    read,

    watch(runId, options = {}) {
      return watchJournal(ctx, runId, options, read, finishedBefore);
    },
  };
}

/**
 * Yield entries from `fromSeq` in order, then each one as it is appended, until `run_finished` or
 * abort. The subscription is live before the first read, so an append between the read and the
 * wait still wakes us; every wake (or, as a safety net, every `watchPollMs`) re-reads by seq.
 */
async function* watchJournal(
  ctx: SqlContext,
  runId: string,
  options: { fromSeq?: number; signal?: AbortSignal },
  read: (runId: string, fromSeq: number) => Promise<JournalEntry[]>,
  finishedBefore: (runId: string, seq: number) => Promise<boolean>,
): AsyncGenerator<JournalEntry> {
  const { signal } = options;
  let next = options.fromSeq ?? 0;
  if (signal?.aborted) return;
  let woken = false;
  let resume: (() => void) | undefined;
  const wake = () => {
    woken = true;
    resume?.();
  };
  const unsubscribe = await ctx.guard('journal.watch', () => ctx.notifier.subscribe(runId, wake));
  signal?.addEventListener('abort', wake);
  try {
    if (next > 0 && (await finishedBefore(runId, next))) return;
    while (!signal?.aborted) {
      woken = false;
      for (const entry of await read(runId, next)) {
        yield entry;
        next = entry.seq + 1;
        if (entry.event === 'run_finished' || signal?.aborted) return;
      }
      if (!woken) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          resume = resolve;
          timer = setTimeout(resolve, ctx.watchPollMs);
        });
        clearTimeout(timer);
        resume = undefined;
      }
      if (!signal?.aborted) await ctx.guard('journal.watch', () => ctx.notifier.live());
    }
  } finally {
    signal?.removeEventListener('abort', wake);
    unsubscribe();
  }
}
