import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { createSchedule, deleteSchedule, updateSchedule } from '../domain/schedule-changes.js';
import { scheduleJson } from '../domain/schedules.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { IdParam } from '../schemas.js';

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
        const { schedule, flow } = await createSchedule(deps, org.id, user.id, id, body);
        return c.json({ schedule: scheduleJson(schedule, flow, now()) }, 201);
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
        const { schedule, flow } = await updateSchedule(deps, org.id, user.id, id, body);
        return c.json({ schedule: scheduleJson(schedule, flow, now()) }, 200);
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
        await deleteSchedule(deps, org.id, user.id, id);
        return c.body(null, 204);
      },
    ),
  ];
}
