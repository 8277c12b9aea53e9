import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/ports/clock.js';
import { parseCron } from '../../../src/schedule/cron.js';
import { startScheduler } from '../../../src/schedule/scheduler.js';

/** A clock whose time moves only when the test advances it; sleepers wake when their deadline passes. */
function manualClock(start: string) {
  let t = Date.parse(start);
  const sleepers: { until: number; wake: () => void }[] = [];
  const clock: Clock = {
    now: () => new Date(t).toISOString(),
    millis: () => t,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const sleeper = { until: t + ms, wake: resolve };
        sleepers.push(sleeper);
        signal?.addEventListener(
          'abort',
          () => {
            sleepers.splice(sleepers.indexOf(sleeper), 1);
            reject(signal.reason);
          },
          { once: true },
        );
      }),
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    clock,
    /** Move time by `ms` in 1-second steps, waking sleepers and letting the loop run after each. */
    async advance(ms: number) {
      const end = t + ms;
      while (t < end) {
        t = Math.min(end, t + 1000);
        for (const s of sleepers.filter((x) => x.until <= t)) {
          sleepers.splice(sleepers.indexOf(s), 1);
          s.wake();
        }
        await settle();
      }
    },
    settle,
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('startScheduler', () => {
  const everySecond = parseCron('* * * * * *', { timezone: 'UTC' });

  it('fires at each cron time, in order', async () => {
    const m = manualClock('2026-01-01T00:00:00.500Z');
    const fired: string[] = [];
    const s = startScheduler({ schedule: everySecond, clock: m.clock, fire: async (at) => void fired.push(at) });
    expect(s.nextAt).toBe('2026-01-01T00:00:01.000Z');
    await m.advance(3000);
    await s.stop();
    expect(fired).toEqual(['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z']);
    expect(s.fires).toBe(3);
  });

  it('skips fire times that come while a fire is in flight, then fires again', async () => {
    const m = manualClock('2026-01-01T00:00:00.000Z');
    const fired: string[] = [];
    const skipped: string[] = [];
    const slow = deferred();
    const s = startScheduler({
      schedule: everySecond,
      clock: m.clock,
      fire: async (at) => {
        fired.push(at);
        if (fired.length === 1) await slow.promise;
      },
      onSkip: (at) => skipped.push(at),
    });
    await m.advance(3000);
    expect(fired).toEqual(['2026-01-01T00:00:01.000Z']);
    expect(skipped).toEqual(['2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z']);
    slow.resolve();
    await m.settle();
    await m.advance(1000);
    expect(fired).toEqual(['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:04.000Z']);
    await s.stop();
  });

  it('stop() waits for the fire in flight and fires nothing after', async () => {
    const m = manualClock('2026-01-01T00:00:00.000Z');
    const slow = deferred();
    let finished = false;
    let count = 0;
    const s = startScheduler({
      schedule: everySecond,
      clock: m.clock,
      fire: async () => {
        count++;
        await slow.promise;
        finished = true;
      },
    });
    await m.advance(1000);
    expect(count).toBe(1);
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await m.settle();
    expect(stopped).toBe(false);
    slow.resolve();
    await stopping;
    expect(finished).toBe(true);
    await m.advance(3000);
    expect(count).toBe(1);
    expect(s.nextAt).toBeUndefined();
  });

  it('a rejected fire goes to onError and the schedule goes on; maxFires bounds the loop', async () => {
    const m = manualClock('2026-01-01T00:00:00.000Z');
    const errors: string[] = [];
    let count = 0;
    const s = startScheduler({
      schedule: everySecond,
      clock: m.clock,
      maxFires: 2,
      fire: async () => {
        count++;
        throw new Error(`boom ${count}`);
      },
      onError: (err, at) => errors.push(`${at} ${(err as Error).message}`),
    });
    await m.advance(5000);
    await s.done;
    expect(errors).toEqual(['2026-01-01T00:00:01.000Z boom 1', '2026-01-01T00:00:02.000Z boom 2']);
    expect(count).toBe(2);
  });

  it('does not catch up fire times missed while the process could not run', async () => {
    const m = manualClock('2026-01-01T00:00:00.000Z');
    const fired: string[] = [];
    const minutely = parseCron('0 * * * * *', { timezone: 'UTC' });
    const s = startScheduler({ schedule: minutely, clock: m.clock, fire: async (at) => void fired.push(at) });
    // The sleeper wakes only after 3 minutes have passed (a suspended machine): one late fire, no backlog.
    const clockAhead = m.clock.now;
    let skew = 0;
    m.clock.now = () => new Date(Date.parse(clockAhead()) + skew).toISOString();
    skew = 180_000;
    await m.advance(60_000);
    expect(fired).toEqual(['2026-01-01T00:01:00.000Z']);
    expect(s.nextAt).toBe('2026-01-01T00:05:00.000Z');
    await s.stop();
  });
});
