import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import { checkCron, nextFire } from '../../../src/service/domain/schedules.js';
import { resolveSettings, settingsFromEnv } from '../../../src/service/settings.js';

/** The schedule rules that need no service: cron and interval checks, next fire times, settings. */

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (isFlowError(err, 'invalid_request')) return (err.data as { issues: { path: string[]; code: string; message: string }[] }).issues[0];
    throw err;
  }
  return undefined;
};

describe('checkCron', () => {
  const now = new Date('2026-03-10T12:00:30.000Z');

  it('takes 5 fields, or 6 with leading seconds, and answers the next fire time (UTC unless a zone is given)', () => {
    expect(checkCron('0 7 * * 1-5', undefined, 60, now).toISOString()).toBe('2026-03-11T07:00:00.000Z');
    expect(checkCron('0 0 7 * * *', 'America/New_York', 60, now).toISOString()).toBe('2026-03-11T11:00:00.000Z');
    expect(checkCron('*/5 * * * * *', undefined, 5, now).toISOString()).toBe('2026-03-10T12:00:35.000Z');
  });

  it('refuses a cron whose consecutive fires come closer than the minimum, naming it', () => {
    const issue = refusal(() => checkCron('*/30 * * * * *', undefined, 60, now));
    expect(issue).toMatchObject({ path: ['cron'], code: 'cron_too_frequent' });
    expect(issue!.message).toContain('the minimum interval between fires is 60 s');
    expect(refusal(() => checkCron('* * * * *', undefined, 61, now))?.code).toBe('cron_too_frequent');
  });

  it('checks many consecutive gaps, not only the first: a short gap later in the sequence is refused', () => {
    // From 00:00:30 the fires are 00:01 (then 23 h 59 min to 00:00 next day), then 00:01 again: 60 s.
    const early = new Date('2026-03-10T00:00:30.000Z');
    const issue = refusal(() => checkCron('0 0,1 0 * * *', undefined, 120, early));
    expect(issue).toMatchObject({ code: 'cron_too_frequent' });
    expect(issue!.message).toContain('2026-03-11T00:00:00.000Z and 2026-03-11T00:01:00.000Z');
    // Seconds 0 and 59 of one minute an hour: the 59 s gap is one of 48 a day.
    expect(refusal(() => checkCron('0,59 30 * * * *', undefined, 60, now))?.code).toBe('cron_too_frequent');
  });

  it('refuses bad crons and time zones with their own issues', () => {
    for (const cron of ['', '* * *', '@hourly', '0 0 0 0 0 0 0', '0 0 31 2 *', 'x * * * *']) {
      expect([cron, refusal(() => checkCron(cron, undefined, 60, now))?.code]).toEqual([cron, 'invalid_cron']);
    }
    expect(refusal(() => checkCron('0 7 * * *', 'Europe/Atlantis', 60, now))).toMatchObject({ path: ['timezone'], code: 'invalid_timezone' });
  });
});

describe('nextFire', () => {
  const s = {
    id: 's',
    org_id: 'o',
    automation_id: 'a',
    cron: '0 * * * *',
    flow_digest: 'sha256:x',
    inputs: {},
    enabled: true,
    created_at: '',
    created_by: '',
    updated_at: '',
  };
  it("is after now and after the schedule's since; none when disabled", () => {
    const now = new Date('2026-03-10T12:30:00.000Z');
    expect(nextFire({ ...s, since: '2026-03-10T00:00:00.000Z' }, now)?.toISOString()).toBe('2026-03-10T13:00:00.000Z');
    expect(nextFire({ ...s, since: '2026-03-10T15:10:00.000Z' }, now)?.toISOString()).toBe('2026-03-10T16:00:00.000Z');
    expect(nextFire({ ...s, since: '2026-03-10T00:00:00.000Z', enabled: false }, now)).toBeUndefined();
  });
});

describe('settings', () => {
  it('SVC_MIN_CRON_INTERVAL (default 60 s) and SVC_SCHEDULER (default on)', () => {
    expect(resolveSettings({}).minCronIntervalSeconds).toBe(60);
    expect(resolveSettings({}).scheduler).toBe(true);
    const env = settingsFromEnv({ SVC_MIN_CRON_INTERVAL: '5', SVC_SCHEDULER: '0' });
    expect([env.minCronIntervalSeconds, env.scheduler]).toEqual([5, false]);
    expect(() => settingsFromEnv({ SVC_MIN_CRON_INTERVAL: '0' })).toThrow(/SVC_MIN_CRON_INTERVAL must be a positive integer/);
  });
});
