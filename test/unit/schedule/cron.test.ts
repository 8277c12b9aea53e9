import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import { parseCron } from '../../../src/schedule/cron.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isFlowError(err) ? err.code : 'not a FlowError';
  }
  return undefined;
}

describe('parseCron', () => {
  it('takes 5 fields (minute precision) and 6 fields with leading seconds', () => {
    const five = parseCron('*/15 * * * *', { timezone: 'UTC' });
    expect(five.fields).toBe(5);
    expect(five.next(new Date('2026-03-01T10:07:30Z'))?.toISOString()).toBe('2026-03-01T10:15:00.000Z');
    const six = parseCron(' */10 * * * * * ', { timezone: 'UTC' });
    expect(six.fields).toBe(6);
    expect(six.expression).toBe('*/10 * * * * *');
    expect(six.next(new Date('2026-03-01T10:07:31Z'))?.toISOString()).toBe('2026-03-01T10:07:40.000Z');
  });

  it('next() is strictly after the given time', () => {
    const every = parseCron('* * * * * *', { timezone: 'UTC' });
    expect(every.next(new Date('2026-03-01T10:00:00.000Z'))?.toISOString()).toBe('2026-03-01T10:00:01.000Z');
  });

  it('day-of-month and day-of-week restricted together fire on either (classic cron)', () => {
    // 2026-03-02 is a Monday; the 13th is a Friday.
    const cron = parseCron('0 9 13 * 1', { timezone: 'UTC' });
    expect(cron.next(new Date('2026-03-01T00:00:00Z'))?.toISOString()).toBe('2026-03-02T09:00:00.000Z');
  });

  it.each([
    ['', 'empty'],
    ['* * *', '3 fields'],
    ['0 0 1 1 * 2027', 'weekday out of range'],
    ['* * * * * * *', '7 fields'],
    ['@daily', 'nickname'],
    ['61 * * * *', 'minute out of range'],
    ['* 24 * * *', 'hour out of range'],
    ['0 0 30 2 *', 'never fires'],
    ['x * * * *', 'not a number'],
  ])('refuses %j (%s) with invalid_cron', (expr) => {
    expect(codeOf(() => parseCron(expr))).toBe('invalid_cron');
  });

  it('names the problem in the message', () => {
    expect(() => parseCron('* * *')).toThrow(/has 3 fields; use 5 .* or 6/);
    expect(() => parseCron('0 0 30 2 *')).toThrow(/never fires/);
  });
});
