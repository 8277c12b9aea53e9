/**
 * Test-only crash points of the hosted service (test/crash/enqueue-kill.test.ts): with
 * `FLOWCTL_CRASH_AT=<name>` in the environment of a process that is not in production
 * (`NODE_ENV` other than `production`), reaching the point of that name SIGKILLs the process at
 * once, as a crash or an OOM kill would, with nothing flushed or settled. Points:
 *
 * - `enqueue-before-commit`: queue dispatch, inside the transaction of a queued run, after its run
 *   record, execution row and queue message are written and before the commit.
 */
export function crashPoint(name: string): void {
  if (process.env.FLOWCTL_CRASH_AT !== name || process.env.NODE_ENV === 'production') return;
  process.stderr.write(`[flowctl] [service] crash point ${name}: SIGKILL (FLOWCTL_CRASH_AT)\n`);
  process.kill(process.pid, 'SIGKILL');
  // The signal is on its way: nothing after this point runs.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}
