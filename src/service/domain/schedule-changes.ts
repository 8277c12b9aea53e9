import type { Digest } from '../../canonical.js';
import type { ScheduleRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { audit } from './audit.js';
import { checkCron, checkScheduleInputs } from './schedules.js';

/**
 * Creating, changing and deleting schedules (docs/hosted-api.md, "Schedules"): each checked against
 * the version it runs, audited, and the scheduler loop of this process poked. A schedule of another
 * org is not_found like one that does not exist.
 */

/** What the audit entry of a schedule change records (never an input's value: its names). */
const detail = (s: ScheduleRecord, flow: string) => ({
  flow,
  cron: s.cron,
  timezone: s.timezone ?? null,
  enabled: s.enabled,
  flow_digest: s.flow_digest,
  inputs: Object.keys(s.inputs),
});

/** Schedule the automation's live version (409 conflict while it is a draft). */
export async function createSchedule(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  automationId: string,
  body: { cron: string; timezone?: string; inputs?: Record<string, unknown>; enabled?: boolean },
): Promise<{ schedule: ScheduleRecord; flow: string }> {
  const automation = await deps.storage.automations.get(orgId, automationId);
  if (!automation) throw serviceError('not_found', 'no such automation in this org');
  checkCron(body.cron, body.timezone, deps.settings.minCronIntervalSeconds, new Date(deps.clock.now()));
  if (automation.status === 'draft' || !automation.live_digest)
    throw serviceError('conflict', 'publish the automation first: a schedule runs its live version');
  const resolved = await deps.engine?.resolve({ digest: automation.live_digest as Digest });
  if (!resolved) throw serviceError('not_ready', "the live version is not stored in this service's engine");
  const inputs = checkScheduleInputs(resolved.spec, body.inputs ?? {});
  const at = deps.clock.now();
  const record: ScheduleRecord = {
    id: deps.ids.uuid(),
    org_id: orgId,
    automation_id: automation.id,
    cron: body.cron,
    ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
    flow_digest: resolved.digest,
    inputs,
    enabled: body.enabled ?? true,
    created_at: at,
    created_by: actor,
    updated_at: at,
    since: at,
  };
  await deps.storage.transaction(async (tx) => {
    await tx.schedules.create(record);
    await audit(deps, tx, { org_id: orgId, actor, target: `schedule:${record.id}`, action: 'schedule.create', detail: detail(record, automation.name) });
  });
  deps.scheduler?.poke();
  return { schedule: record, flow: automation.name };
}

/** Change a schedule's cron, time zone, inputs or enabled; it keeps running its recorded version. */
export async function updateSchedule(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  id: string,
  body: { cron?: string; timezone?: string | null; inputs?: Record<string, unknown>; enabled?: boolean },
): Promise<{ schedule: ScheduleRecord; flow: string }> {
  const { storage } = deps;
  const current = await storage.schedules.get(orgId, id);
  if (!current) throw serviceError('not_found', 'no such schedule in this org');
  const automation = await storage.automations.get(orgId, current.automation_id);
  if (!automation) throw serviceError('not_found', 'no such schedule in this org');
  const cron = body.cron ?? current.cron;
  const timezone = body.timezone === undefined ? current.timezone : (body.timezone ?? undefined);
  const timing = body.cron !== undefined || body.timezone !== undefined;
  if (timing) checkCron(cron, timezone, deps.settings.minCronIntervalSeconds, new Date(deps.clock.now()));
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
    const next = await tx.schedules.update(orgId, id, {
      ...(body.cron !== undefined ? { cron } : {}),
      ...(body.timezone !== undefined ? { timezone } : {}),
      ...(inputs !== undefined ? { inputs } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      updated_at: at,
      ...(restart ? { since: at } : {}),
    });
    if (!next) throw serviceError('not_found', 'no such schedule in this org');
    await audit(deps, tx, {
      org_id: orgId,
      actor,
      target: `schedule:${id}`,
      action: 'schedule.update',
      detail: { ...detail(next, automation.name), changed: Object.keys(body).sort() },
    });
    return next;
  });
  deps.scheduler?.poke();
  return { schedule: updated, flow: automation.name };
}

/** Delete a schedule: it fires no more. */
export async function deleteSchedule(deps: ServiceDeps, orgId: string, actor: string, id: string): Promise<void> {
  const { storage } = deps;
  const current = await storage.schedules.get(orgId, id);
  if (!current) throw serviceError('not_found', 'no such schedule in this org');
  const automation = await storage.automations.get(orgId, current.automation_id);
  await storage.transaction(async (tx) => {
    if (!(await tx.schedules.delete(orgId, id))) throw serviceError('not_found', 'no such schedule in this org');
    await audit(deps, tx, { org_id: orgId, actor, target: `schedule:${id}`, action: 'schedule.delete', detail: detail(current, automation?.name ?? '') });
  });
  deps.scheduler?.poke();
}
