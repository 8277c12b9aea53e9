import { z } from '@hono/zod-openapi';
import type { Digest } from '../../canonical.js';
import type { ScheduleRecord } from '../../ports/service-storage.js';
import { audit, type ServiceDeps } from '../context.js';
import { checkCron, checkScheduleInputs, scheduleJson } from '../domain/schedules.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';

/**
 * Schedules (spec "Create schedule body"; HOSTED-API.md; docs/hosted-api.md, "Schedules"): create
 * and list under an automation, change and delete by id. Owner only but the list; audited; a
 * schedule of another org is 404 like one that does not exist.
 */

const Inputs = z.record(z.string(), z.unknown()).openapi({ description: 'Fixed non-secret inputs of every fire, checked against the version it runs' });
const Timezone = z.string().min(1).max(100).openapi({ description: 'IANA time zone the cron is read in; default UTC', example: 'Europe/Berlin' });
const Cron = z.string().trim().min(1).max(200).openapi({ description: '5 fields, or 6 with a leading seconds field', example: '0 7 * * 1-5' });
const CreateScheduleBody = z
  .object({ cron: Cron, inputs: Inputs.optional(), enabled: z.boolean().optional(), timezone: Timezone.optional() })
  .openapi('CreateScheduleBody');
const PatchScheduleBody = z
  .object({ cron: Cron.optional(), inputs: Inputs.optional(), enabled: z.boolean().optional(), timezone: Timezone.nullable().optional() })
  .openapi('PatchScheduleBody');
const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

export const Schedule = z
  .object({
    id: z.string(),
    flow: z.string().openapi({ description: 'The automation name' }),
    cron: z.string(),
    timezone: z.string().nullable(),
    flow_digest: z.string().openapi({ description: 'The version every fire runs, recorded at creation' }),
    inputs: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    at: z.string().openapi({ description: 'When the schedule was created' }),
    updated_at: z.string(),
    next_fire_at: z.string().nullable(),
  })
  .openapi('Schedule');

export function scheduleRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  const now = () => new Date(deps.clock.now());
  const detail = (s: ScheduleRecord, flow: string) => ({
    flow,
    cron: s.cron,
    timezone: s.timezone ?? null,
    enabled: s.enabled,
    flow_digest: s.flow_digest,
    inputs: Object.keys(s.inputs),
  });

  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/automations/{id}/schedules',
        auth: 'owner',
        summary: "Schedule the automation's live version on a cron (422 when it would fire more often than SVC_MIN_CRON_INTERVAL)",
        tags: ['schedules'],
        request: { params: IdParam, ...jsonBody(CreateScheduleBody) },
        responses: {
          201: jsonResponse('The schedule', z.object({ schedule: Schedule })),
          404: jsonResponse('`not_found`: no such automation in this org', z.object({ error: z.string(), message: z.string() })),
          409: jsonResponse('`conflict`: the automation has no published version', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const { org, user } = c.get('auth');
        const automation = await storage.automations.get(org.id, id);
        if (!automation) throw serviceError('not_found', 'no such automation in this org');
        checkCron(body.cron, body.timezone, deps.settings.minCronIntervalSeconds, now());
        if (automation.status === 'draft' || !automation.live_digest)
          throw serviceError('conflict', 'publish the automation first: a schedule runs its live version');
        const resolved = await deps.engine?.resolve({ digest: automation.live_digest as Digest });
        if (!resolved) throw serviceError('not_ready', "the live version is not stored in this service's engine");
        const inputs = checkScheduleInputs(resolved.spec, body.inputs ?? {});
        const at = deps.clock.now();
        const record: ScheduleRecord = {
          id: deps.ids.uuid(),
          org_id: org.id,
          automation_id: automation.id,
          cron: body.cron,
          ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
          flow_digest: resolved.digest,
          inputs,
          enabled: body.enabled ?? true,
          created_at: at,
          created_by: user.id,
          updated_at: at,
          since: at,
        };
        await storage.transaction(async (tx) => {
          await tx.schedules.create(record);
          await audit(deps, tx, {
            org_id: org.id,
            actor: user.id,
            target: `schedule:${record.id}`,
            action: 'schedule.create',
            detail: detail(record, automation.name),
          });
        });
        deps.scheduler?.poke();
        return c.json({ schedule: scheduleJson(record, automation.name, now()) }, 201);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/automations/{id}/schedules',
        auth: 'session',
        summary: "The automation's schedules, oldest first",
        tags: ['schedules'],
        request: { params: IdParam },
        responses: {
          200: jsonResponse('Schedules', z.object({ schedules: z.array(Schedule) })),
          404: jsonResponse('`not_found`: no such automation in this org', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org } = c.get('auth');
        const automation = await storage.automations.get(org.id, id);
        if (!automation) throw serviceError('not_found', 'no such automation in this org');
        const at = now();
        return c.json({ schedules: (await storage.schedules.list(org.id, automation.id)).map((s) => scheduleJson(s, automation.name, at)) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'patch',
        path: '/api/schedules/{id}',
        auth: 'owner',
        summary: "Change a schedule's cron, time zone, inputs or enabled (it keeps running its recorded version)",
        tags: ['schedules'],
        request: { params: IdParam, ...jsonBody(PatchScheduleBody) },
        responses: {
          200: jsonResponse('The schedule', z.object({ schedule: Schedule })),
          404: jsonResponse('`not_found`: no such schedule in this org', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const { org, user } = c.get('auth');
        const current = await storage.schedules.get(org.id, id);
        if (!current) throw serviceError('not_found', 'no such schedule in this org');
        const automation = await storage.automations.get(org.id, current.automation_id);
        if (!automation) throw serviceError('not_found', 'no such schedule in this org');
        const cron = body.cron ?? current.cron;
        const timezone = body.timezone === undefined ? current.timezone : (body.timezone ?? undefined);
        const timing = body.cron !== undefined || body.timezone !== undefined;
        if (timing) checkCron(cron, timezone, deps.settings.minCronIntervalSeconds, now());
        let inputs: Record<string, unknown> | undefined;
        if (body.inputs !== undefined) {
          const resolved = await deps.engine?.resolve({ digest: current.flow_digest as Digest });
          if (!resolved) throw serviceError('not_ready', "the schedule's version is not stored in this service's engine");
          inputs = checkScheduleInputs(resolved.spec, body.inputs);
        }
        const at = deps.clock.now();
        // New timing, or enabled again: times that passed before now never fire.
        const restart = timing || (body.enabled === true && !current.enabled);
        const updated = await storage.transaction(async (tx) => {
          const next = await tx.schedules.update(org.id, id, {
            ...(body.cron !== undefined ? { cron } : {}),
            ...(body.timezone !== undefined ? { timezone } : {}),
            ...(inputs !== undefined ? { inputs } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
            updated_at: at,
            ...(restart ? { since: at } : {}),
          });
          if (!next) throw serviceError('not_found', 'no such schedule in this org');
          await audit(deps, tx, {
            org_id: org.id,
            actor: user.id,
            target: `schedule:${id}`,
            action: 'schedule.update',
            detail: { ...detail(next, automation.name), changed: Object.keys(body).sort() },
          });
          return next;
        });
        deps.scheduler?.poke();
        return c.json({ schedule: scheduleJson(updated, automation.name, now()) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/schedules/{id}',
        auth: 'owner',
        summary: 'Delete a schedule: it fires no more',
        tags: ['schedules'],
        request: { params: IdParam },
        responses: {
          204: { description: 'Deleted' },
          404: jsonResponse('`not_found`: no such schedule in this org', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org, user } = c.get('auth');
        const current = await storage.schedules.get(org.id, id);
        if (!current) throw serviceError('not_found', 'no such schedule in this org');
        const automation = await storage.automations.get(org.id, current.automation_id);
        await storage.transaction(async (tx) => {
          if (!(await tx.schedules.delete(org.id, id))) throw serviceError('not_found', 'no such schedule in this org');
          await audit(deps, tx, {
            org_id: org.id,
            actor: user.id,
            target: `schedule:${id}`,
            action: 'schedule.delete',
            detail: detail(current, automation?.name ?? ''),
          });
        });
        deps.scheduler?.poke();
        return c.body(null, 204);
      },
    ),
  ];
}
