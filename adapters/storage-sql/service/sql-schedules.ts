import type { Updateable } from 'kysely';
import type { ScheduleFireRecord, ScheduleRecord, ScheduleStore } from '../../../src/ports/service-storage.js';
import { errorCode } from '../sql-errors.js';
import { isoTextNotNull, jsonb, jsonTextNotNull, parseJson, timestamptz } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';
import type { SchedulesTable } from './service-schema.js';

interface ScheduleRow {
  id: string;
  org_id: string;
  automation_id: string;
  cron: string;
  timezone: string | null;
  flow_digest: string;
  inputs: string;
  enabled: boolean;
  created_at: string;
  created_by: string;
  updated_at: string;
  since: string;
}

interface FireRow {
  schedule_id: string;
  org_id: string;
  fire_at: string;
  claimed_at: string;
  claimed_by: string;
  execution_id: string | null;
  error: string | null;
}

const toSchedule = (r: ScheduleRow): ScheduleRecord => ({
  id: r.id,
  org_id: r.org_id,
  automation_id: r.automation_id,
  cron: r.cron,
  ...(r.timezone !== null ? { timezone: r.timezone } : {}),
  flow_digest: r.flow_digest,
  inputs: parseJson(r.inputs) as Record<string, unknown>,
  enabled: r.enabled,
  created_at: r.created_at,
  created_by: r.created_by,
  updated_at: r.updated_at,
  since: r.since,
});

const toFire = (r: FireRow): ScheduleFireRecord => ({
  schedule_id: r.schedule_id,
  org_id: r.org_id,
  fire_at: r.fire_at,
  claimed_at: r.claimed_at,
  claimed_by: r.claimed_by,
  ...(r.execution_id !== null ? { execution_id: r.execution_id } : {}),
  ...(r.error !== null ? { error: r.error } : {}),
});

/** Cron schedules of automations and their claimed fires (migration 0005_schedules). */
export function sqlScheduleStore(ctx: ServiceContext): ScheduleStore {
  const schedules = () =>
    ctx.db
      .selectFrom('svc_schedules')
      .select([
        'id',
        'org_id',
        'automation_id',
        'cron',
        'timezone',
        'flow_digest',
        jsonTextNotNull('inputs', 'inputs'),
        'enabled',
        isoTextNotNull('created_at', 'created_at'),
        'created_by',
        isoTextNotNull('updated_at', 'updated_at'),
        isoTextNotNull('since', 'since'),
      ]);
  const one = async (orgId: string, id: string) => {
    const row = await schedules().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row ? toSchedule(row) : undefined;
  };
  return {
    create: (s) =>
      ctx.guard('schedules.create', async () => {
        await ctx.db
          .insertInto('svc_schedules')
          .values({
            id: s.id,
            org_id: s.org_id,
            automation_id: s.automation_id,
            cron: s.cron,
            timezone: s.timezone ?? null,
            flow_digest: s.flow_digest,
            inputs: jsonb(s.inputs),
            enabled: s.enabled,
            created_at: timestamptz('created_at', s.created_at),
            created_by: s.created_by,
            updated_at: timestamptz('updated_at', s.updated_at),
            since: timestamptz('since', s.since),
          })
          .execute();
      }),
    get: (orgId, id) => ctx.guard('schedules.get', () => one(orgId, id)),
    list: (orgId, automationId) =>
      ctx.guard('schedules.list', async () => {
        const rows = await schedules().where('org_id', '=', orgId).where('automation_id', '=', automationId).orderBy('created_at').orderBy('id').execute();
        return rows.map(toSchedule);
      }),
    update: (orgId, id, patch) =>
      ctx.guard('schedules.update', async () => {
        const set: Updateable<SchedulesTable> = {};
        if (patch.cron !== undefined) set.cron = patch.cron;
        if ('timezone' in patch) set.timezone = patch.timezone ?? null;
        if (patch.inputs !== undefined) set.inputs = jsonb(patch.inputs);
        if (patch.enabled !== undefined) set.enabled = patch.enabled;
        if (patch.flow_digest !== undefined) set.flow_digest = patch.flow_digest;
        if (patch.updated_at !== undefined) set.updated_at = timestamptz('updated_at', patch.updated_at);
        if (patch.since !== undefined) set.since = timestamptz('since', patch.since);
        if (Object.keys(set).length > 0) await ctx.db.updateTable('svc_schedules').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
        return one(orgId, id);
      }),
    delete: (orgId, id) =>
      ctx.guard('schedules.delete', async () => {
        const res = await ctx.db.deleteFrom('svc_schedules').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
        return Number(res.numDeletedRows) > 0;
      }),
    listEnabled: (limit) =>
      ctx.guard('schedules.listEnabled', async () => {
        const rows = await schedules().where('enabled', '=', true).orderBy('created_at').orderBy('id').limit(limit).execute();
        return rows.map(toSchedule);
      }),
    claimFire: (fire) =>
      ctx.guard('schedules.claimFire', async () => {
        // Insert-select from the schedule row: a schedule of another org (or gone) claims nothing.
        try {
          const res = await ctx.db
            .insertInto('svc_schedule_fires')
            .columns(['schedule_id', 'org_id', 'fire_at', 'claimed_at', 'claimed_by'])
            .expression((eb) =>
              eb
                .selectFrom('svc_schedules')
                .select([
                  'id',
                  'org_id',
                  timestamptz('fire_at', fire.fire_at).as('fire_at'),
                  timestamptz('claimed_at', fire.claimed_at).as('claimed_at'),
                  eb.val(fire.claimed_by).as('claimed_by'),
                ])
                .where('id', '=', fire.schedule_id)
                .where('org_id', '=', fire.org_id),
            )
            .onConflict((oc) => oc.columns(['schedule_id', 'fire_at']).doNothing())
            .executeTakeFirst();
          return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
        } catch (err) {
          // The schedule was deleted between the select and the insert.
          if (errorCode(err) === '23503') return false;
          throw err;
        }
      }),
    completeFire: (orgId, scheduleId, fireAt, outcome) =>
      ctx.guard('schedules.completeFire', async () => {
        await ctx.db
          .updateTable('svc_schedule_fires')
          .set({ execution_id: outcome.execution_id ?? null, error: outcome.error ?? null })
          .where('org_id', '=', orgId)
          .where('schedule_id', '=', scheduleId)
          .where('fire_at', '=', timestamptz('fire_at', fireAt))
          .execute();
      }),
    fires: (orgId, scheduleId, limit) =>
      ctx.guard('schedules.fires', async () => {
        const rows = await ctx.db
          .selectFrom('svc_schedule_fires')
          .select([
            'schedule_id',
            'org_id',
            isoTextNotNull('fire_at', 'fire_at'),
            isoTextNotNull('claimed_at', 'claimed_at'),
            'claimed_by',
            'execution_id',
            'error',
          ])
          .where('org_id', '=', orgId)
          .where('schedule_id', '=', scheduleId)
          .orderBy('fire_at', 'desc')
          .limit(limit)
          .execute();
        return rows.map(toFire);
      }),
  };
}
