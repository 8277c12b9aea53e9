import { sql } from 'kysely';
import type { Digest } from '../../src/canonical.js';
import { FlowError, prefixed } from '../../src/errors.js';
import type { RunListQuery, RunRecord, RunStore } from '../../src/ports/storage.js';
import type { RunStatus } from '../../src/run/types.js';
import type { SqlContext } from './sql-context.js';
import type { GroupCommit, ItemResult } from './group-commit.js';
import { isoText, jsonbOrNull, jsonText, parseJson, runRows, storedJsonText, table, timestamptz } from './sql-values.js';

interface RunRow {
  id: string;
  flow_digest: string;
  flow_name: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  output: string | null;
  error: string | null;
  replay_of: string | null;
  inputs: string | null;
  lease: string | null;
  cancel_requested: boolean;
}

function toRecord(row: RunRow): RunRecord {
  const run: RunRecord = {
    id: row.id,
    flow_digest: row.flow_digest as Digest,
    flow_name: row.flow_name,
    status: row.status as RunStatus,
    started_at: row.started_at as string,
  };
  if (row.finished_at !== null) run.finished_at = row.finished_at;
  if (row.output !== null) run.output = parseJson(row.output);
  if (row.error !== null) run.error = parseJson(row.error) as RunRecord['error'];
  if (row.replay_of !== null) run.replay_of = row.replay_of;
  if (row.inputs !== null) run.inputs = parseJson(row.inputs) as Record<string, unknown>;
  if (row.lease !== null) run.lease = parseJson(row.lease) as RunRecord['lease'];
  if (row.cancel_requested) run.cancel_requested = true;
  return run;
}

/** A run record as the create statements take it: the record, and the row's JSON text for a batch. */
export interface CreateItem {
  id: string;
  run: RunRecord;
  row: string;
}

const str = (v: unknown): string => (v === undefined || v === null ? 'null' : JSON.stringify(v));

/**
 * The row's JSON: text columns as plain JSON strings (stored as they are), JSON columns in their
 * stored form (sql-values.ts), timestamps checked. Absent optional values are left out (SQL NULL);
 * a JSON null output stays the jsonb value `null`.
 */
function createItem(run: RunRecord): CreateItem {
  timestamptz('started_at', run.started_at);
  if (run.finished_at !== undefined) timestamptz('finished_at', run.finished_at);
  const json = (key: string, value: unknown): string => {
    if (value === undefined) return '';
    const text = storedJsonText(value);
    if (text === undefined) throw new FlowError('invalid_record', prefixed('storage-sql', `run ${run.id}: ${key} is not JSON-serialisable`));
    return `,${JSON.stringify(key)}:${text}`;
  };
  const row =
    `{"id":${str(run.id)},"flow_digest":${str(run.flow_digest)},"flow_name":${str(run.flow_name)},"status":${str(run.status)}` +
    `,"started_at":${str(run.started_at)},"finished_at":${str(run.finished_at)},"replay_of":${str(run.replay_of)}` +
    `,"cancel_requested":${run.cancel_requested === true}` +
    json('output', run.output) +
    json('error', run.error) +
    json('inputs', run.inputs) +
    json('lease', run.lease) +
    '}';
  return { id: String(run.id), run, row };
}

function runExists(id: string): FlowError {
  return new FlowError('run_exists', prefixed('storage-sql', `run ${id} already exists`), { data: { run_id: id } });
}

/** Insert several run records (distinct ids) in one statement; an id that is taken is `run_exists`. */
export async function createStatement(ctx: SqlContext, items: CreateItem[]): Promise<ItemResult<void>[]> {
  const rows = await runRows(
    ctx,
    sql<{ id: string }>`
    insert into ${table(ctx, 'runs')}
      (id, flow_digest, flow_name, status, started_at, finished_at, output, error, replay_of, inputs, lease, cancel_requested)
    select x->>'id', x->>'flow_digest', x->>'flow_name', x->>'status', (x->>'started_at')::timestamptz, (x->>'finished_at')::timestamptz,
      x->'output', x->'error', x->>'replay_of', x->'inputs', x->'lease', (x->>'cancel_requested')::boolean
    from jsonb_array_elements(${`[${items.map((it) => it.row).join(',')}]`}::text::jsonb) as x
    order by x->>'id'
    on conflict (id) do nothing
    returning id`,
  );
  const created = new Set(rows.map((r) => r.id));
  return items.map((it) => (created.has(it.id) ? { ok: true, value: undefined } : { ok: false, error: runExists(it.id) }));
}

/** One run record alone: a one-row insert with scalar parameters (cheaper to plan than the batch). */
export async function createOne(ctx: SqlContext, item: CreateItem): Promise<void> {
  const run = item.run;
  // Every parameter typed in SQL, absent or not, so the statement text (a prepared statement) never varies.
  const json = (value: unknown) => sql`${value === undefined ? null : storedJsonText(value)}::text::jsonb`;
  const rows = await runRows(
    ctx,
    sql<{ id: string }>`
    insert into ${table(ctx, 'runs')}
      (id, flow_digest, flow_name, status, started_at, finished_at, output, error, replay_of, inputs, lease, cancel_requested)
    values (${run.id}::text, ${run.flow_digest}::text, ${run.flow_name}::text, ${run.status}::text,
      ${run.started_at}::text::timestamptz, ${run.finished_at ?? null}::text::timestamptz,
      ${json(run.output)}, ${json(run.error)}, ${run.replay_of ?? null}::text,
      ${json(run.inputs)}, ${json(run.lease)}, ${run.cancel_requested === true}::boolean)
    on conflict (id) do nothing
    returning id`,
  );
  if (rows.length === 0) throw runExists(item.id);
}

/**
 * The run store. `creates`, when given (the storage outside a transaction), groups concurrent
 * creates into one statement (group-commit.ts).
 */
export function sqlRunStore(ctx: SqlContext, creates?: GroupCommit<CreateItem, void>): RunStore {
  const selectRuns = () =>
    ctx.db
      .selectFrom('runs')
      .select([
        'id',
        'flow_digest',
        'flow_name',
        'status',
        isoText('started_at', 'started_at'),
        isoText('finished_at', 'finished_at'),
        jsonText('output', 'output'),
        jsonText('error', 'error'),
        'replay_of',
        jsonText('inputs', 'inputs'),
        jsonText('lease', 'lease'),
        'cancel_requested',
      ]);

  return {
    create: (run) =>
      ctx.guard('runs.create', async () => {
        const item = createItem(run);
        await (creates ? creates.submit(item) : createOne(ctx, item));
      }),

    get: (id) =>
      ctx.guard('runs.get', async () => {
        const row = await selectRuns().where('id', '=', id).executeTakeFirst();
        return row ? toRecord(row) : undefined;
      }),

    list: (query: RunListQuery = {}) =>
      ctx.guard('runs.list', async () => {
        const { limit, before, flow_name, status } = query;
        if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
          throw new FlowError('invalid_query', prefixed('storage-sql', `limit must be a non-negative integer, got ${limit}`));
        }
        let q = selectRuns().orderBy('started_at', 'desc').orderBy('id', 'desc');
        if (flow_name !== undefined) q = q.where('flow_name', '=', flow_name);
        if (status !== undefined) q = status.length === 0 ? q.where(sql<boolean>`false`) : q.where('status', 'in', status);
        if (before !== undefined) {
          // Strictly older in the list order; an unknown cursor matches nothing (null comparison).
          const cursor = ctx.db.selectFrom('runs').select(['started_at', 'id']).where('id', '=', before);
          q = q.where(sql<boolean>`(started_at, id) < ${cursor}`);
        }
        if (limit !== undefined) q = q.limit(limit);
        return (await q.execute()).map(toRecord);
      }),

    update: (id, patch) =>
      ctx.guard('runs.update', async () => {
        const set: Record<string, unknown> = {};
        if (patch.status !== undefined) set.status = patch.status;
        if (patch.finished_at !== undefined) set.finished_at = timestamptz('finished_at', patch.finished_at);
        if (patch.output !== undefined) set.output = jsonbOrNull(patch.output);
        if (patch.error !== undefined) set.error = jsonbOrNull(patch.error);
        if (patch.lease !== undefined) set.lease = jsonbOrNull(patch.lease);
        if (patch.cancel_requested !== undefined) set.cancel_requested = patch.cancel_requested;
        const result =
          Object.keys(set).length === 0
            ? await ctx.db
                .selectFrom('runs')
                .select('id')
                .where('id', '=', id)
                .execute()
                .then((r) => r.length)
            : await ctx.db
                .updateTable('runs')
                .set(set)
                .where('id', '=', id)
                .executeTakeFirst()
                .then((r) => Number(r.numUpdatedRows));
        if (result === 0) throw new FlowError('not_found', prefixed('storage-sql', `run ${id} not found`), { data: { run_id: id } });
      }),
  };
}
