import { readFileSync } from 'node:fs';

/**
 * Waiting in tests without depending on CPU speed.
 *
 * A test waits for the event it is about (a file appears, a process is gone, a run is finished), never
 * for a number of milliseconds. The caps below only end a hang: they are far above what any loaded
 * machine needs, and reaching one is reported as a hang with what was awaited, never as a timing
 * result. Use them instead of `for (let i = 0; i < 50 && ...; i++) await sleep(20)`, whose bound of a
 * second is an assertion about speed.
 */

/** Default cap of a wait: a hang, not a slow machine (the test timeout in vitest.config.ts is above it). */
export const HANG_CAP_MS = 90_000;

export interface WaitOptions {
  /** What is awaited, for the error when the cap is reached. */
  what: string;
  /** Cap on the wall time of the wait (ends a hang). Default HANG_CAP_MS. */
  capMs?: number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Poll `probe` until it returns something other than `undefined`/`false`, and return that. Polls
 * often at first (a condition that is about to hold costs little) and at most every 250 ms after.
 * Throws `hang: <what> ...` once `capMs` of wall time have passed.
 */
export async function waitUntil<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, options: WaitOptions): Promise<T> {
  const cap = options.capMs ?? HANG_CAP_MS;
  const deadline = Date.now() + cap;
  let delay = 5;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`hang: ${options.what} did not happen within ${cap} ms (a cap on a hang, not a timing assertion)`);
    await pause(delay);
    delay = Math.min(delay * 2, 250);
  }
}

/**
 * For tests of a time limit that the code under test starts itself (a tool's timeout_ms, a sandbox's
 * limit): the test can check the limit's effect only if the work got far enough before the limit
 * struck (for example, a script wrote the pid of the grandchild it spawned), and how far work gets
 * in N ms depends on the machine. So: run `attempt` with `startMs`; when it returns `undefined` (the
 * limit struck before the precondition held), run it again with twice the limit, up to `tries` times.
 * A limit that never lets the work start fails every try and the error says so.
 */
export async function withGrowingLimit<T>(startMs: number, attempt: (limitMs: number) => Promise<T | undefined>, tries = 4): Promise<T> {
  let limit = startMs;
  for (let i = 0; i < tries; i++, limit *= 2) {
    const result = await attempt(limit);
    if (result !== undefined) return result;
  }
  throw new Error(`the work never got far enough before the limit, with limits from ${startMs} ms to ${limit / 2} ms`);
}

/** Whether a process is alive: a zombie (killed, not yet reaped by its new parent) counts as dead. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`not a pid: ${pid}`);
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    // no /proc entry: gone (or not Linux, then ask the kernel)
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wait (capped) until the process `pid` is gone. */
export async function waitGone(pid: number, what = `process ${pid} to exit`): Promise<void> {
  await waitUntil(() => !processAlive(pid), { what });
}
