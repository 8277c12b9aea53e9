import { Cron } from 'croner';
import { FlowError } from '../errors.js';

/**
 * Cron expressions (docs/schedule.md): 5 fields `minute hour day-of-month month day-of-week`, or 6
 * fields with a leading `second`. Parsed by croner; times are in the machine's local time zone
 * unless `timezone` (an IANA name) is given. When both day-of-month and day-of-week are restricted,
 * a day matching either fires (classic cron).
 */
export interface CronSchedule {
  /** The expression as given (trimmed). */
  expression: string;
  /** 5 or 6. */
  fields: 5 | 6;
  timezone?: string;
  /** The first fire time strictly after `after`, or undefined when there is none. */
  next(after: Date): Date | undefined;
}

export interface ParseCronOptions {
  /** IANA time zone, e.g. `Europe/Berlin`. Default: the machine's local time zone. */
  timezone?: string;
}

/**
 * Validate and parse a cron expression. FlowError `invalid_cron` (with `data.expression`) for
 * anything else: a wrong number of fields, nicknames such as `@daily`, out-of-range values, or an
 * expression that can never fire (`0 0 30 2 *`).
 */
export function parseCron(expression: string, options: ParseCronOptions = {}): CronSchedule {
  const text = typeof expression === 'string' ? expression.trim() : '';
  const fail = (why: string): never => {
    throw new FlowError('invalid_cron', `[flowctl] [schedule] invalid cron expression "${text}": ${why}`, { data: { expression: text } });
  };
  if (text === '') fail('it is empty');
  const count = text.split(/\s+/).length;
  if (count !== 5 && count !== 6) {
    fail(`it has ${count} field${count === 1 ? '' : 's'}; use 5 (minute hour day month weekday) or 6 (second minute hour day month weekday)`);
  }
  let cron: Cron;
  try {
    cron = new Cron(text, { mode: '5-or-6-parts', paused: true, ...(options.timezone ? { timezone: options.timezone } : {}) });
  } catch (err) {
    return fail((err as Error).message);
  }
  const schedule: CronSchedule = {
    expression: text,
    fields: count as 5 | 6,
    ...(options.timezone ? { timezone: options.timezone } : {}),
    next(after) {
      return cron.nextRun(after) ?? undefined;
    },
  };
  // croner accepts patterns that never match (Feb 30); a schedule that never fires is a mistake.
  let probe: Date | undefined;
  try {
    probe = schedule.next(new Date(0));
  } catch (err) {
    return fail((err as Error).message);
  }
  if (probe === undefined) fail('it never fires');
  return schedule;
}
