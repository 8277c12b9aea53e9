import { sql, type NotNull, type Updateable } from 'kysely';
import type { AutomationRecord, AutomationStatus, AutomationStore } from '../../../src/ports/service-storage.js';
import { isoTextNotNull, jsonb, jsonTextNotNull, parseJson, table, timestamptz } from '../sql-values.js';
import { insertUnique, type ServiceContext } from './service-context.js';
import type { AutomationsTable } from './service-schema.js';

interface AutomationRow {
  id: string;
  org_id: string;
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: string;
  status: AutomationStatus;
  live_digest: string | null;
  needs_attention: boolean;
  failing_step: string | null;
  example: boolean;
  params: string;
}

const toAutomation = (r: AutomationRow): AutomationRecord => ({
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  task: r.task,
  site: r.site,
  mcp_enabled: r.mcp_enabled,
  created_at: r.created_at,
  status: r.status,
  ...(r.live_digest !== null ? { live_digest: r.live_digest } : {}),
  needs_attention: r.needs_attention,
  ...(r.failing_step !== null ? { failing_step: r.failing_step } : {}),
  example: r.example,
  params: parseJson(r.params) as unknown[],
});

/** Automations (migration 0002_automations): names unique per org, at most one starter example. */
export function sqlAutomationStore(ctx: ServiceContext): AutomationStore {
  const automations = () =>
    ctx.db
      .selectFrom('svc_automations')
      .select([
        'id',
        'org_id',
        'name',
        'task',
        'site',
        'mcp_enabled',
        isoTextNotNull('created_at', 'created_at'),
        'status',
        'live_digest',
        'needs_attention',
        'failing_step',
        'example',
        jsonTextNotNull('params', 'params'),
      ]);
  const one = async (orgId: string, id: string) => {
    const row = await automations().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row ? toAutomation(row) : undefined;
  };
  return {
    create: (a) =>
      ctx.guard('automations.create', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_automations')
              .values({
                id: a.id,
                org_id: a.org_id,
                name: a.name,
                task: a.task,
                site: a.site,
                mcp_enabled: a.mcp_enabled,
                created_at: timestamptz('created_at', a.created_at),
                status: a.status,
                live_digest: a.live_digest ?? null,
                needs_attention: a.needs_attention,
                failing_step: a.failing_step ?? null,
                example: a.example,
                params: jsonb(a.params),
              })
              .execute(),
          (constraint) => (constraint.includes('example') ? 'example' : constraint.includes('name') ? 'name' : 'id'),
        ),
      ),
    get: (orgId, id) => ctx.guard('automations.get', () => one(orgId, id)),
    getByName: (orgId, name) =>
      ctx.guard('automations.getByName', async () => {
        const row = await automations().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
        return row ? toAutomation(row) : undefined;
      }),
    getExample: (orgId) =>
      ctx.guard('automations.getExample', async () => {
        const row = await automations().where('org_id', '=', orgId).where('example', '=', true).executeTakeFirst();
        return row ? toAutomation(row) : undefined;
      }),
    list: (orgId) =>
      ctx.guard('automations.list', async () => {
        const rows = await automations().where('org_id', '=', orgId).orderBy('created_at').orderBy('name').execute();
        return rows.map(toAutomation);
      }),
    listMcpTools: (orgId) =>
      ctx.guard('automations.listMcpTools', () =>
        ctx.db
          .selectFrom('svc_automations')
          .select(['id', 'name', 'task', 'live_digest'])
          .where('org_id', '=', orgId)
          .where('status', '<>', 'draft')
          .where('live_digest', 'is not', null)
          .where('mcp_enabled', '=', true)
          .orderBy('created_at')
          .orderBy('name')
          .$narrowType<{ live_digest: NotNull }>()
          .execute(),
      ),
    mcpToolsFingerprint: (orgId) =>
      ctx.guard('automations.mcpToolsFingerprint', async () => {
        // The rows of listMcpTools, in its order, each field length-prefixed (so no text can make two
        // lists concatenate alike), hashed in the database: one short row instead of the list.
        const field = (col: string) => `length(${col})::text || ':' || ${col}`;
        const task = `(case when task is null then 'N' else 'S' || ${field('task')} end)`;
        const row = sql.raw(`${field('id')} || ${field('name')} || ${task} || ${field('live_digest')}`);
        const { rows } = await sql<{ fp: string }>`
          select encode(sha256(convert_to(coalesce(string_agg(${row}, ';' order by created_at, name), ''), 'UTF8')), 'hex') || '/' || count(*)::text as fp
            from ${table(ctx, 'svc_automations')}
           where org_id = ${orgId} and status <> 'draft' and live_digest is not null and mcp_enabled = true`.execute(ctx.db);
        return rows[0]!.fp;
      }),
    update: (orgId, id, patch) =>
      ctx.guard('automations.update', async () => {
        const set: Updateable<AutomationsTable> = {};
        if (patch.task !== undefined) set.task = patch.task;
        if (patch.site !== undefined) set.site = patch.site;
        if (patch.mcp_enabled !== undefined) set.mcp_enabled = patch.mcp_enabled;
        if (patch.status !== undefined) set.status = patch.status;
        if ('live_digest' in patch) set.live_digest = patch.live_digest ?? null;
        if (patch.needs_attention !== undefined) set.needs_attention = patch.needs_attention;
        if ('failing_step' in patch) set.failing_step = patch.failing_step ?? null;
        if (Object.keys(set).length > 0) await ctx.db.updateTable('svc_automations').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
        return one(orgId, id);
      }),
  };
}
