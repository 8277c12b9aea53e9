import { Cron } from 'croner';
import type { Digest } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import type { FlowSpec } from '../../flow/types.js';
import type { ScheduleRecord } from '../../ports/service-storage.js';
import { resolveInputs } from '../../run/inputs.js';
import { parseCron } from '../../schedule/cron.js';
import type { ServiceDeps } from '../context.js';
import { invalidRequest, serviceError, type Issue } from '../errors.js';
import { checkCallerInputs, enqueueRun, finishRun, queueDispatch, startRun } from './dispatch.js';

/**
 * Schedules of the hosted service (docs/hosted-api.md, "Schedules"): cron validation with the
 * minimum interval, the Schedule resource, and the scheduler loop every service process runs. A
 * fire is claimed in the database (one row per schedule and fire time), so however many processes
 * run the loop, each fire time dispatches once.
 */

/** Consecutive fire times compared against the minimum interval (cron gaps vary: `0,1 * * * * *`). */
export const CRON_GAPS_CHECKED = 250;
/** The scheduler re-reads the schedules at least this often (other processes create and change them). */
export const DEFAULT_SCHEDULER_REFRESH_MS = 10_000;
/** Enabled schedules one loop reads per wake. */
export const MAX_SCHEDULES_PER_LOOP = 10_000;
/** Fires one process dispatches at once; beyond it a wake claims nothing (another process may). */
export const MAX_FIRES_IN_FLIGHT = 64;

const stripPrefix = (m: string) => m.replace(/^(\[[^\]]+\]\s*)+/, '');

/** A croner instance for a schedule; times are read in its time zone, UTC when it has none. */
function cronOf(cron: string, timezone: string | undefined): Cron {
  return new Cron(cron, { mode: '5-or-6-parts', paused: true, timezone: timezone ?? 'UTC' });
}

/**
 * Check a schedule's cron and time zone (422 `invalid_request`, every issue listed): 5 or 6 fields
 * (croner), a valid IANA zone, and no two of the next CRON_GAPS_CHECKED consecutive fires closer
 * than `minSeconds`. Returns the next fire time after `now`.
 */
export function checkCron(cron: string, timezone: string | undefined, minSeconds: number, now: Date): Date {
  if (timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      throw invalidRequest([
        { path: ['timezone'], message: `"${timezone.slice(0, 100)}" is not an IANA time zone (for example Europe/Berlin)`, code: 'invalid_timezone' },
      ]);
    }
  }
  try {
    parseCron(cron, { timezone: timezone ?? 'UTC' });
  } catch (err) {
    if (isFlowError(err, 'invalid_cron')) throw invalidRequest([{ path: ['cron'], message: stripPrefix(err.message), code: 'invalid_cron' }]);
    throw err;
  }
  const c = cronOf(cron, timezone);
  const first = c.nextRun(now);
  if (!first) throw invalidRequest([{ path: ['cron'], message: 'it never fires again', code: 'invalid_cron' }]);
  let prev = first;
  for (let i = 0; i < CRON_GAPS_CHECKED; i++) {
    const next = c.nextRun(prev);
    if (!next) break;
    const gap = (next.getTime() - prev.getTime()) / 1000;
    if (gap < minSeconds) {
      throw invalidRequest([
        {
          path: ['cron'],
          message: `it fires ${gap} s apart (${prev.toISOString()} and ${next.toISOString()}); the minimum interval between fires is ${minSeconds} s`,
          code: 'cron_too_frequent',
        },
      ]);
    }
    prev = next;
  }
  return first;
}

/** The schedule's inputs, checked against the FlowSpec it runs (as the gateway checks a caller's). */
export function checkScheduleInputs(spec: FlowSpec, inputs: unknown): Record<string, unknown> {
  const given = checkCallerInputs(spec, inputs);
  try {
    resolveInputs(spec, given);
  } catch (err) {
    if (isFlowError(err, 'invalid_inputs')) {
      const list = ((err.data as { issues?: { path: string; message: string }[] } | undefined)?.issues ?? []) as { path: string; message: string }[];
      const issues: Issue[] = list.map((i) => ({ path: ['inputs', ...i.path.split('.').filter(Boolean)], message: i.message, code: 'invalid_inputs' }));
      throw invalidRequest(issues.length ? issues : [{ path: ['inputs'], message: stripPrefix(err.message), code: 'invalid_inputs' }]);
    }
    throw err;
  }
  return given;
}

/** The next fire time of an enabled schedule, after `now` and after its `since`. */
export function nextFire(s: ScheduleRecord, now: Date): Date | undefined {
  if (!s.enabled) return undefined;
  try {
    const after = Math.max(now.getTime(), Date.parse(s.since));
    return cronOf(s.cron, s.timezone).nextRun(new Date(after)) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The Schedule resource: the spec's fields (`at`: when it was created), plus timezone and the next fire time. */
export function scheduleJson(s: ScheduleRecord, flow: string, now: Date) {
  return {
    id: s.id,
    flow,
    cron: s.cron,
    timezone: s.timezone ?? null,
    flow_digest: s.flow_digest,
    inputs: s.inputs,
    enabled: s.enabled,
    at: s.created_at,
    updated_at: s.updated_at,
    next_fire_at: nextFire(s, now)?.toISOString() ?? null,
  };
}

/**
 * Dispatch one fire: the schedule's recorded version with its inputs, dispatch kind `schedule`.
 * The one place schedules start runs; it goes through the gateway's dispatch (startRun, then the
 * outcome recorded when the run ends), so a change of dispatch mode changes it here only.
 */
export async function dispatchScheduleFire(
  deps: ServiceDeps,
  s: ScheduleRecord,
  signal: AbortSignal,
): Promise<{ executionId: string; done: Promise<unknown> }> {
  const automation = await deps.storage.automations.get(s.org_id, s.automation_id);
  if (!automation || automation.status === 'draft') throw serviceError('not_found', 'the automation is gone or is a draft');
  const resolved = await deps.engine?.resolve({ digest: s.flow_digest as Digest });
  if (!resolved) throw serviceError('not_found', `version ${s.flow_digest} is not stored`);
  const target = { automation, digest: resolved.digest, spec: resolved.spec };
  if (queueDispatch(deps)) {
    // Queue dispatch: a worker runs it and records its outcome.
    const queued = await enqueueRun(deps, target, s.inputs, { kind: 'schedule' });
    return { executionId: queued.id, done: Promise.resolve() };
  }
  const execution = await startRun(deps, target, s.inputs, { kind: 'schedule' });
  return { executionId: execution.id, done: finishRun(deps, execution, signal) };
}

export interface ScheduleLoop {
  /** This loop's name in claim rows (`claimed_by`). */
  readonly instance: string;
  /** Re-read the schedules now (a schedule was created or changed in this process). */
  poke(): void;
  /** Stop waking, wait for claims and dispatches in flight; runs still going are no longer awaited. */
  stop(): Promise<void>;
}

export interface ScheduleLoopOptions {
  refreshMs?: number;
}

/**
 * The scheduler loop of one service process. Each wake (at the earliest next fire time of the
 * enabled schedules, and at least every `refreshMs`), it reads the enabled schedules and, for each,
 * takes the latest fire time at or before the wake (and after the schedule's `since`) that this
 * loop has not handled yet, claims it, and when the claim is won dispatches the run. Catch-up
 * policy: only that latest time is considered, so after downtime (or a stall) a schedule fires at
 * most once for the times it missed, and older missed times are skipped.
 */
export function startScheduleLoop(deps: ServiceDeps, options: ScheduleLoopOptions = {}): ScheduleLoop {
  const refreshMs = options.refreshMs ?? DEFAULT_SCHEDULER_REFRESH_MS;
  const instance = `scheduler-${process.pid}-${deps.ids.uuid().slice(0, 8)}`;
  const stopping = new AbortController();
  const runs = new AbortController();
  let wake = new AbortController();
  const handled = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  const running = new Set<Promise<unknown>>();
  const { logger } = deps;

  const fire = async (s: ScheduleRecord, at: Date): Promise<void> => {
    const fireAt = at.toISOString();
    const won = await deps.storage.schedules.claimFire({
      schedule_id: s.id,
      org_id: s.org_id,
      fire_at: fireAt,
      claimed_at: deps.clock.now(),
      claimed_by: instance,
    });
    if (!won) return;
    try {
      const { executionId, done } = await dispatchScheduleFire(deps, s, runs.signal);
      await deps.storage.schedules.completeFire(s.org_id, s.id, fireAt, { execution_id: executionId });
      const tracked = done.catch((err: unknown) => {
        if (!runs.signal.aborted) logger.warn(`[flowctl] [service] schedule ${s.id} fire ${fireAt}: ${(err as Error)?.message ?? String(err)}`);
      });
      running.add(tracked);
      void tracked.finally(() => running.delete(tracked));
    } catch (err) {
      const message = isFlowError(err) ? `${err.code}: ${stripPrefix(err.message)}` : 'internal error';
      if (!isFlowError(err)) logger.error(`[flowctl] [service] schedule ${s.id} fire ${fireAt}: ${(err as Error)?.stack ?? String(err)}`);
      await deps.storage.schedules.completeFire(s.org_id, s.id, fireAt, { error: message.slice(0, 500) }).catch(() => undefined);
    }
  };

  const tick = async (now: Date): Promise<number> => {
    const schedules = await deps.storage.schedules.listEnabled(MAX_SCHEDULES_PER_LOOP);
    let nextWake = now.getTime() + refreshMs;
    const live = new Set<string>();
    for (const s of schedules) {
      live.add(s.id);
      let cron: Cron;
      try {
        cron = cronOf(s.cron, s.timezone);
      } catch {
        continue; // validated at creation; a zone a later runtime no longer knows fires nothing
      }
      // The latest fire time at or before now (croner's previousRuns excludes its reference).
      const latest = cron.previousRuns(1, new Date(now.getTime() + 1))[0];
      const since = Date.parse(s.since);
      if (latest && latest.getTime() > since && latest.getTime() > (handled.get(s.id) ?? -Infinity)) {
        handled.set(s.id, latest.getTime());
        if (inFlight.size < MAX_FIRES_IN_FLIGHT) {
          const p = fire(s, latest)
            .catch((err: unknown) => logger.error(`[flowctl] [service] schedule ${s.id}: ${(err as Error)?.message ?? String(err)}`))
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        } else {
          logger.warn(
            `[flowctl] [service] schedule ${s.id}: ${MAX_FIRES_IN_FLIGHT} fires in flight in this process; ${latest.toISOString()} left to other processes`,
          );
        }
      }
      const next = cron.nextRun(new Date(Math.max(now.getTime(), since)));
      if (next) nextWake = Math.min(nextWake, next.getTime());
    }
    for (const id of handled.keys()) if (!live.has(id)) handled.delete(id);
    return nextWake;
  };

  const loop = async () => {
    while (!stopping.signal.aborted) {
      const now = new Date(deps.clock.now());
      let nextWake: number;
      try {
        nextWake = await tick(now);
      } catch (err) {
        logger.warn(`[flowctl] [service] scheduler: ${(err as Error)?.message ?? String(err)}; retrying in ${refreshMs} ms`);
        nextWake = now.getTime() + refreshMs;
      }
      if (stopping.signal.aborted) break;
      const wait = Math.max(0, nextWake - Date.parse(deps.clock.now()));
      const signal = AbortSignal.any([stopping.signal, wake.signal]);
      await deps.clock.sleep(wait, signal).catch(() => undefined);
      if (wake.signal.aborted) wake = new AbortController();
    }
  };

  const done = loop();
  let stopped: Promise<void> | undefined;
  return {
    instance,
    poke() {
      wake.abort();
    },
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        await done;
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        runs.abort();
        await Promise.allSettled([...running]);
      })();
      return stopped;
    },
  };
}
