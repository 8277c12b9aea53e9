import { sql, type Updateable } from 'kysely';
import type { DispatchKind, ExecutionRecord, ExecutionStore } from '../../../src/ports/service-storage.js';
import { isoText, isoTextNotNull, timestamptz, timestamptzOrNull } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';
import type { ExecutionsTable } from './service-schema.js';

interface ExecutionRow {
  id: string;
  org_id: string;
  automation_id: string;
  flow: string;
  run_id: string;
  flow_digest: string;
  dispatch: DispatchKind;
  key_id: string | null;
  status: ExecutionRecord['status'];
  created_at: string;
  finished_at: string | null;
  error_code: string | null;
}

const toExecution = (r: ExecutionRow): ExecutionRecord => ({
  id: r.id,
  org_id: r.org_id,
  automation_id: r.automation_id,
  flow: r.flow,
  run_id: r.run_id,
  flow_digest: r.flow_digest,
  dispatch: r.dispatch,
  ...(r.key_id !== null ? { key_id: r.key_id } : {}),
  status: r.status,
  created_at: r.created_at,
  ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
  ...(r.error_code !== null ? { error_code: r.error_code } : {}),
});

/** The executions index (migration 0003_executions): run_refs that point at engine runs. */
export function sqlExecutionStore(ctx: ServiceContext): ExecutionStore {
  const executions = () =>
    ctx.db
      .selectFrom('svc_executions')
      .select([
        'id',
        'org_id',
        'automation_id',
        'flow',
        'run_id',
        'flow_digest',
        'dispatch',
        'key_id',
        'status',
        isoTextNotNull('created_at', 'created_at'),
        isoText('finished_at', 'finished_at'),
        'error_code',
      ]);
  return {
    create: (e) =>
      ctx.guard('executions.create', async () => {
        await ctx.db
          .insertInto('svc_executions')
          .values({
            id: e.id,
            org_id: e.org_id,
            automation_id: e.automation_id,
            flow: e.flow,
            run_id: e.run_id,
            flow_digest: e.flow_digest,
            dispatch: e.dispatch,
            key_id: e.key_id ?? null,
            status: e.status,
            created_at: timestamptz('created_at', e.created_at),
            finished_at: timestamptzOrNull('finished_at', e.finished_at),
            error_code: e.error_code ?? null,
          })
          .execute();
      }),
    update: (orgId, id, patch) =>
      ctx.guard('executions.update', async () => {
        const set: Updateable<ExecutionsTable> = {};
        if (patch.status !== undefined) set.status = patch.status;
        if (patch.finished_at !== undefined) set.finished_at = timestamptz('finished_at', patch.finished_at);
        if (patch.error_code !== undefined) set.error_code = patch.error_code;
        if (Object.keys(set).length > 0) await ctx.db.updateTable('svc_executions').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
      }),
    finish: (orgId, id, patch) =>
      ctx.guard('executions.finish', async () => {
        const res = await ctx.db
          .updateTable('svc_executions')
          .set({
            status: patch.status,
            finished_at: patch.finished_at === undefined ? null : timestamptz('finished_at', patch.finished_at),
            error_code: patch.error_code ?? null,
          })
          .where('org_id', '=', orgId)
          .where('id', '=', id)
          .where('status', 'not in', ['succeeded', 'failed', 'canceled'])
          .executeTakeFirst();
        return Number(res.numUpdatedRows) === 1;
      }),
    get: (orgId, id) =>
      ctx.guard('executions.get', async () => {
        const row = await executions().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
        return row ? toExecution(row) : undefined;
      }),
    getByRunId: (orgId, runId) =>
      ctx.guard('executions.getByRunId', async () => {
        const row = await executions().where('org_id', '=', orgId).where('run_id', '=', runId).executeTakeFirst();
        return row ? toExecution(row) : undefined;
      }),
    list: (orgId, query) =>
      ctx.guard('executions.list', async () => {
        let q = executions().where('org_id', '=', orgId);
        if (query.flow !== undefined) q = q.where('flow', '=', query.flow);
        if (query.before) {
          const b = query.before;
          const at = timestamptz('cursor', b.created_at);
          q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', b.id)])]));
        }
        const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
        return rows.map(toExecution);
      }),
    usage: (orgId, since) =>
      ctx.guard('executions.usage', async () => {
        const rows = await ctx.db
          .selectFrom('svc_executions')
          .select([
            'automation_id',
            sql<string>`count(*) filter (where created_at >= ${since}::text::timestamptz)`.as('calls'),
            sql<string>`to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as('last_run_at'),
          ])
          .where('org_id', '=', orgId)
          .groupBy('automation_id')
          .execute();
        return new Map(rows.map((r) => [r.automation_id, { calls: Number(r.calls), last_run_at: r.last_run_at }]));
      }),
    listUnfinished: (query) =>
      ctx.guard('executions.listUnfinished', async () => {
        // The partial index svc_executions_unfinished holds exactly these rows.
        let q = executions().where('status', 'in', ['queued', 'running']).where('created_at', '<', timestamptz('createdBefore', query.createdBefore));
        if (query.after) {
          const a = query.after;
          const at = timestamptz('cursor', a.created_at);
          q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', a.id)])]));
        }
        const rows = await q.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(query.limit).execute();
        return rows.map(toExecution);
      }),
  };
}
