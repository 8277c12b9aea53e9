// Schedules and their claimed fires.

/**
 * A cron schedule of an automation (docs/hosted-api.md, "Schedules"). It runs the version it
 * recorded (`flow_digest`) with fixed inputs checked against that version's FlowSpec.
 */
export interface ScheduleRecord {
  id: string;
  org_id: string;
  automation_id: string;
  /** 5 fields, or 6 with leading seconds (validated by the service). */
  cron: string;
  /** IANA time zone the cron is read in; absent: UTC. */
  timezone?: string;
  flow_digest: string;
  inputs: Record<string, unknown>;
  enabled: boolean;
  created_at: string;
  created_by: string;
  updated_at: string;
  /**
   * Fire times at or before this instant never fire: creation, re-enabling and a cron or time zone
   * change move it to now, so none of them fires a time that passed before it.
   */
  since: string;
}

/** A claimed fire of a schedule: one row per (schedule_id, fire_at), whatever the process count. */
export interface ScheduleFireRecord {
  schedule_id: string;
  org_id: string;
  /** The cron time this fire is for (not when it ran). */
  fire_at: string;
  claimed_at: string;
  /** The process (scheduler instance) that won the claim. */
  claimed_by: string;
  /** The run_ref of the dispatched run, once dispatched. */
  execution_id?: string;
  /** Why the fire dispatched nothing (automation gone or draft, version missing, inputs refused). */
  error?: string;
}

export interface ScheduleStore {
  create(schedule: ScheduleRecord): Promise<void>;
  get(orgId: string, id: string): Promise<ScheduleRecord | undefined>;
  /** The automation's schedules, oldest first. */
  list(orgId: string, automationId: string): Promise<ScheduleRecord[]>;
  /** Change the given fields; returns the updated record, or undefined when not in the org. */
  update(
    orgId: string,
    id: string,
    patch: Partial<Pick<ScheduleRecord, 'cron' | 'timezone' | 'inputs' | 'enabled' | 'flow_digest' | 'updated_at' | 'since'>>,
  ): Promise<ScheduleRecord | undefined>;
  /** True when it existed; its fire rows go with it. */
  delete(orgId: string, id: string): Promise<boolean>;
  /**
   * Enabled schedules of every org, oldest first, at most `limit`: the scheduler's read (a system
   * read that no route reaches; every write it leads to names the schedule's own org).
   */
  listEnabled(limit: number): Promise<ScheduleRecord[]>;
  /**
   * Claim one fire: true for exactly one caller per (schedule_id, fire_at) across every process and
   * connection (a unique key in the database), false for all others and when the schedule no longer
   * exists in that org.
   */
  claimFire(fire: Omit<ScheduleFireRecord, 'execution_id' | 'error'>): Promise<boolean>;
  /** Record what a claimed fire dispatched. */
  completeFire(orgId: string, scheduleId: string, fireAt: string, outcome: { execution_id?: string; error?: string }): Promise<void>;
  /** The schedule's fires, newest first, at most `limit`. */
  fires(orgId: string, scheduleId: string, limit: number): Promise<ScheduleFireRecord[]>;
}
