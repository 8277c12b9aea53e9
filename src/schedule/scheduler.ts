import { systemClock } from '../engine/defaults.js';
import type { Clock } from '../ports/clock.js';
import type { CronSchedule } from './cron.js';

export interface SchedulerOptions {
  schedule: CronSchedule;
  /** Runs one fire; `at` is the scheduled time (ISO-8601, UTC). Its rejection goes to `onError`. */
  fire: (at: string) => Promise<void>;
  /** A fire came while the previous one was still running: it is skipped, never queued. */
  onSkip?: (at: string) => void;
  /** A fire rejected. Default: ignored (the loop goes on). */
  onError?: (err: unknown, at: string) => void;
  /** Where time comes from and how the loop waits. Default: the system clock. */
  clock?: Clock;
  /** Stop after this many fire times (fired or skipped). Default: no limit. */
  maxFires?: number;
}

export interface Scheduler {
  /** Fire times reached so far (fired or skipped). */
  readonly fires: number;
  /** The next fire time (ISO-8601), or undefined when the schedule is exhausted or stopped. */
  readonly nextAt: string | undefined;
  /** Resolves when the loop has ended and no fire is in flight. */
  readonly done: Promise<void>;
  /** Stop waiting for fire times, then wait for the fire in flight (idempotent). */
  stop(): Promise<void>;
}

/**
 * The scheduler loop over an injected clock: sleep until the next fire time, fire without waiting
 * for it, repeat. At most one fire is in flight: a fire time that arrives while one runs is skipped
 * (onSkip), so the same flow never runs twice at once and a slow run never builds a backlog. Fire
 * times missed while the process could not run (a suspended machine) are not caught up: the next
 * time is computed from the later of the last fire time and now.
 */
export function startScheduler(options: SchedulerOptions): Scheduler {
  const clock = options.clock ?? systemClock();
  const max = options.maxFires ?? Infinity;
  const controller = new AbortController();
  let fires = 0;
  let nextAt: string | undefined;
  let inFlight: Promise<void> | undefined;

  const loop = async () => {
    let from = new Date(clock.now());
    while (!controller.signal.aborted && fires < max) {
      const next = options.schedule.next(from);
      if (!next) break;
      nextAt = next.toISOString();
      const wait = next.getTime() - Date.parse(clock.now());
      try {
        await clock.sleep(Math.max(0, wait), controller.signal);
      } catch (err) {
        if (controller.signal.aborted) break;
        throw err;
      }
      if (controller.signal.aborted) break;
      fires++;
      const at = next.toISOString();
      if (inFlight) options.onSkip?.(at);
      else {
        inFlight = Promise.resolve()
          .then(() => options.fire(at))
          .catch((err: unknown) => options.onError?.(err, at))
          .finally(() => (inFlight = undefined));
      }
      // A timer may wake a hair early: never compute the next time from before this one.
      from = new Date(Math.max(next.getTime(), Date.parse(clock.now())));
    }
    nextAt = undefined;
  };

  const done = loop().finally(async () => {
    nextAt = undefined;
    while (inFlight) await inFlight;
  });
  return {
    get fires() {
      return fires;
    },
    get nextAt() {
      return nextAt;
    },
    done,
    async stop() {
      controller.abort();
      await done;
    },
  };
}
