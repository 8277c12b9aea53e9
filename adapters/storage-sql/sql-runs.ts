import { sql } from 'kysely';
import type { Digest } from '../../src/canonical.js';
import { FlowError, prefixed } from '../../src/errors.js';
import type { RunListQuery, RunRecord, RunStore } from '../../src/ports/storage.js';
import type { RunStatus } from '../../src/run/types.js';
import type { SqlContext } from './sql-context.js';
import { constraintOf, errorCode } from './sql-errors.js';
import { isoText, jsonbOrNull, jsonText, parseJson, timestamptz, timestamptzOrNull } from './sql-values.js';

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

export function sqlRunStore(ctx: SqlContext): RunStore {
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
        const values = {
          id: run.id,
          flow_digest: run.flow_digest,
          flow_name: run.flow_name,
          status: run.status,
          started_at: timestamptz('started_at', run.started_at),
          finished_at: timestamptzOrNull('finished_at', run.finished_at),
          output: jsonbOrNull(run.output),
          error: jsonbOrNull(run.error),
          replay_of: run.replay_of ?? null,
          inputs: jsonbOrNull(run.inputs),
          lease: jsonbOrNull(run.lease),
          cancel_requested: run.cancel_requested === true,
        };
        try {
          await ctx.db.insertInto('runs').values(values).execute();
        } catch (err) {
          if (errorCode(err) === '23505' && constraintOf(err) === 'runs_pkey') {
            throw new FlowError('run_exists', prefixed('storage-sql', `run ${run.id} already exists`), { data: { run_id: run.id } });
          }
          throw err;
        }
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
            ? await ctx.db.selectFrom('runs').select('id').where('id', '=', id).execute().then((r) => r.length)
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
