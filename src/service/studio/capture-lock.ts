/**
 * One read-modify-write of an authoring session's capture at a time, in this process: the studio's
 * live appends and `PATCH /api/authoring/{id}` (a middleware of createHostedService) both take it,
 * keyed by the automation id, so an edit made in the web app while recording never drops an op
 * captured at the same moment (nor the other way round). Across processes (several API processes on
 * one Postgres) it does not hold: keep a studio session and its edits on one process (sticky sessions).
 */
const tails = new Map<string, Promise<unknown>>();

export function withCaptureLock<T>(automationId: string, fn: () => Promise<T>): Promise<T> {
  const key = automationId;
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
