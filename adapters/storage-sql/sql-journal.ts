import { sql } from 'kysely';
import { FlowError, prefixed } from '../../src/errors.js';
import type { JournalStore, RunPatch } from '../../src/ports/storage.js';
import type { JournalEntry } from '../../src/run/types.js';
import type { GroupCommit, ItemResult } from './group-commit.js';
import type { SqlContext } from './sql-context.js';
import { constraintOf, errorCode } from './sql-errors.js';
import { parseStoredJson, runPatchText, runRows, storedJsonText, table } from './sql-values.js';

function conflict(runId: string, seq: number, length: number | undefined): FlowError {
  const where = length === undefined ? 'another writer appended it first' : `the journal has ${length} entries`;
  return new FlowError('journal_conflict', prefixed('storage-sql', `run ${runId}: cannot append seq ${seq}: ${where}`), {
    data: { run_id: runId, seq, length },
  });
}

function unknownRun(runId: string): FlowError {
  return new FlowError('not_found', prefixed('storage-sql', `run ${runId} not found: create the run before appending to its journal`), {
    data: { run_id: runId },
  });
}

/** One journal append as the append statement takes it: the entry's stored JSON text, and the run patch's. */
export interface AppendItem {
  runId: string;
  seq: number;
  entry: string;
  patch: string | undefined;
}

/** The batch parameter: a JSON array of `{r, s, e, p?}`, the entry and patch texts spliced in as they are. */
function appendParam(items: AppendItem[]): string {
  return `[${items.map((it) => `{"r":${JSON.stringify(it.runId)},"s":${it.seq},"e":${it.entry}${it.patch === undefined ? '' : `,"p":${it.patch}`}}`).join(',')}]`;
}

/**
 * Append several entries (of distinct runs) in one statement, so one transaction. Each goes in only
 * at its journal's current length; two writers of entry N both pass that check under READ COMMITTED
 * and the primary key (run_id, seq) makes the second wait for the first and then insert nothing
 * (`on conflict do nothing`), so the journal never forks. The entries that went in NOTIFY (delivered
 * on commit) and apply their run patch to their run record in the same statement: both or neither.
 * Per item: ok, `journal_conflict` (with the length the statement saw, or none when a concurrent
 * writer won) or `not_found`.
 */
export async function appendStatement(ctx: SqlContext, items: AppendItem[]): Promise<ItemResult<void>[]> {
  const journal = table(ctx, 'journal');
  const runs = table(ctx, 'runs');
  const rows = await runRows(
    ctx,
    sql<{ i: string | number; length: number; known: boolean; inserted: boolean }>`
    with input as (
      select (x.n - 1)::integer as i, x.v->>'r' as run_id, (x.v->>'s')::integer as seq, x.v->'e' as entry, x.v->'p' as patch
      from jsonb_array_elements(${appendParam(items)}::text::jsonb) with ordinality as x(v, n)
    ),
    checked as (
      select input.*,
        coalesce((select max(j.seq) + 1 from ${journal} as j where j.run_id = input.run_id), 0) as length,
        -- A scalar subquery, so one index probe per item (an EXISTS may be planned as a scan of all runs).
        coalesce((select true from ${runs} as r where r.id = input.run_id), false) as known
      from input
    ),
    ins as (
      insert into ${journal} (run_id, seq, entry)
      select run_id, seq, entry from checked where known and length = seq order by run_id
      on conflict (run_id, seq) do nothing
      returning run_id, seq
    ),
    upd as (
      update ${runs} as r set ${patchSet('c.patch')}
      from checked as c join ins on ins.run_id = c.run_id and ins.seq = c.seq
      where r.id = c.run_id and c.patch is not null
      returning r.id
    )
    select c.i, c.length, c.known, ins.seq is not null as inserted,
      case when ins.seq is not null then pg_notify(${ctx.channel}, c.run_id || ':' || c.seq) end as notified
    from checked as c left join ins on ins.run_id = c.run_id and ins.seq = c.seq
    order by c.i`,
  );
  const results: ItemResult<void>[] = items.map(() => ({ ok: false, error: new Error('storage-sql: append statement returned no row for an item') }));
  for (const row of rows) {
    const it = items[Number(row.i)]!;
    const length = Number(row.length);
    if (row.inserted) results[Number(row.i)] = { ok: true, value: undefined };
    else if (!row.known) results[Number(row.i)] = { ok: false, error: unknownRun(it.runId) };
    // It passed the length check, yet a concurrent writer of the same seq committed first.
    else results[Number(row.i)] = { ok: false, error: conflict(it.runId, it.seq, length === it.seq ? undefined : length) };
  }
  return results;
}

/**
 * The SET list that applies a patch (jsonb `patch`, sql-values.ts runPatchText) to `runs as r`: a
 * field the patch has is set, any other keeps its value.
 */
function patchSet(patch: string) {
  const p = sql.raw(patch);
  return sql`
        status = case when ${p} ? 'status' then ${p}->>'status' else r.status end,
        finished_at = case when ${p} ? 'finished_at' then (${p}->>'finished_at')::timestamptz else r.finished_at end,
        output = case when ${p} ? 'output' then ${p}->'output' else r.output end,
        error = case when ${p} ? 'error' then ${p}->'error' else r.error end,
        lease = case when ${p} ? 'lease' then ${p}->'lease' else r.lease end,
        cancel_requested = case when ${p} ? 'cancel_requested' then (${p}->>'cancel_requested')::boolean else r.cancel_requested end`;
}

/**
 * One append alone, in one statement: the batch statement's rules with scalar parameters, which is
 * cheaper to plan (PGlite plans every statement). The entry goes in only at the journal's current
 * length; a concurrent writer of the same seq makes this one fail on the primary key. Nothing
 * inserted: one more query says whether the run exists (`not_found`) or how long its journal is.
 */
export async function appendOne(ctx: SqlContext, item: AppendItem): Promise<void> {
  const journal = table(ctx, 'journal');
  const runs = table(ctx, 'runs');
  const { runId, seq } = item;
  const update =
    item.patch === undefined
      ? sql``
      : sql`, upd as (update ${runs} as r set ${patchSet('c.patch')} from ins, (select ${item.patch}::text::jsonb as patch) as c where r.id = ins.run_id)`;
  let rows: unknown[];
  try {
    rows = await runRows(
      ctx,
      sql<{ notified: string }>`
      with ins as (
        insert into ${journal} (run_id, seq, entry)
        select ${runId}::text, ${seq}::integer, ${item.entry}::text::jsonb
        where coalesce((select max(j.seq) + 1 from ${journal} as j where j.run_id = ${runId}::text), 0) = ${seq}::integer
        returning run_id, seq
      )${update}
      select pg_notify(${ctx.channel}, ins.run_id || ':' || ins.seq) as notified from ins`,
    );
  } catch (err) {
    if (errorCode(err) === '23505' && constraintOf(err) === 'journal_pkey') throw conflict(runId, seq, undefined);
    if (errorCode(err) === '23503') throw unknownRun(runId);
    throw err;
  }
  if (rows.length > 0) return;
  const [state] = await runRows(
    ctx,
    sql<{ length: number; known: boolean }>`
    select coalesce((select max(j.seq) + 1 from ${journal} as j where j.run_id = ${runId}::text), 0) as length,
      coalesce((select true from ${runs} as r where r.id = ${runId}::text), false) as known`,
  );
  if (!state?.known) throw unknownRun(runId);
  throw conflict(runId, seq, Number(state.length));
}

/**
 * The journal store. `appends`, when given (the storage outside a transaction), groups concurrent
 * appends into one statement (group-commit.ts); inside a transaction each append is its own
 * statement on the transaction's connection.
 */
export function sqlJournalStore(ctx: SqlContext, appends?: GroupCommit<AppendItem, void>): JournalStore {
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
    append: (runId: string, entry: JournalEntry, text?: string, run?: RunPatch) =>
      ctx.guard('journal.append', async () => {
        const seq = entry.seq;
        if (!Number.isSafeInteger(seq) || seq < 0) {
          throw new FlowError('invalid_record', prefixed('storage-sql', `run ${runId}: entry seq must be a non-negative integer, got ${seq}`));
        }
        if (typeof runId !== 'string') throw new FlowError('invalid_record', prefixed('storage-sql', 'a run id must be a string'));
        const stored = storedJsonText(entry, text);
        if (stored === undefined) throw new FlowError('invalid_record', prefixed('storage-sql', 'value is not JSON-serialisable'));
        const item: AppendItem = { runId, seq, entry: stored, patch: run === undefined ? undefined : runPatchText(run) };
        await (appends ? appends.submit(item) : appendOne(ctx, item));
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
