/**
 * Schedules that fire exactly once, for tests that need "a schedule fire" of an automation and not a
 * stream of them. A per-second cron deleted once it fired leaves as many runs as seconds passed before
 * the delete: on a loaded machine that is dozens of concurrent runs (browser runs among them), and the
 * test then measures the machine instead of the product. Here the cron names one second (a yearly
 * cron in UTC: `s m h day month *`) a little ahead. A schedule created after that second has passed (a
 * slow machine) has its next fire a year away: every schedule of the try is deleted and the whole set
 * is created again further ahead (the lead doubles, bounded). No wait depends on the machine's speed.
 */

export interface ScheduleCaller {
  ok(method: string, path: string, body?: unknown): Promise<any>;
}

/** A 6-field cron (UTC) that fires at `at` (whole second) only, once a year. */
export function cronAt(at: Date): string {
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

/**
 * Creates one schedule per automation id, all firing once at the same second; returns the schedule ids
 * and that second. `leadMs` is the first lead (default 3 s); each try that comes too late doubles it.
 */
export async function scheduleOnce(caller: ScheduleCaller, automationIds: string[], leadMs = 3000): Promise<{ ids: string[]; at: Date }> {
  for (let lead = leadMs, tries = 0; tries < 6; lead *= 2, tries++) {
    const at = new Date(Math.ceil((Date.now() + lead) / 1000) * 1000);
    const ids: string[] = [];
    let late = false;
    for (const id of automationIds) {
      const { schedule } = await caller.ok('POST', `/api/automations/${id}/schedules`, { cron: cronAt(at) });
      ids.push(schedule.id);
      if (schedule.next_fire_at !== at.toISOString()) {
        late = true;
        break;
      }
    }
    if (!late) return { ids, at };
    for (const id of ids) await caller.ok('DELETE', `/api/schedules/${id}`);
  }
  throw new Error(`the schedules could not be created before their fire time in 6 tries (last lead ${leadMs * 32} ms)`);
}
