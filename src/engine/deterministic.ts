import type { Clock, IdSource } from '../ports/clock.js';

export interface FixedClockOptions {
  /** The first `now()` (default `2026-01-01T00:00:00.000Z`). */
  start?: string;
  /** How far each `now()` or `millis()` call moves time, in ms (default 1). */
  tickMs?: number;
}

/**
 * A clock for tests and fixtures: time moves only when read, by `tickMs` per read, and `sleep`
 * (retry backoff) returns at once after moving time by the slept amount. Runs are reproducible.
 */
export function createFixedClock(options: FixedClockOptions = {}): Clock & { slept: number[] } {
  let t = Date.parse(options.start ?? '2026-01-01T00:00:00.000Z');
  if (Number.isNaN(t)) throw new TypeError(`[flowctl] createFixedClock: start "${options.start}" is not an ISO date-time`);
  const tick = options.tickMs ?? 1;
  const slept: number[] = [];
  return {
    slept,
    now() {
      const iso = new Date(t).toISOString();
      t += tick;
      return iso;
    },
    millis() {
      t += tick;
      return t;
    },
    async sleep(ms, signal) {
      if (signal?.aborted) throw signal.reason;
      slept.push(ms);
      t += ms;
    },
  };
}

/** Sequential uuid v4 ids: `00000000-0000-4000-8000-000000000001`, `...002`, ... (`first` sets the start). */
export function createSequentialIds(first = 1): IdSource {
  let n = first;
  return {
    uuid: () => `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
  };
}
