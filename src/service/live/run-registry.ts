import type { DispatchKind } from '../../ports/service-storage.js';

/**
 * The runs executing in this process, by automation (docs/hosted-api.md, "Run live view"): sync
 * dispatch (and a schedule fire in sync dispatch) registers a run as soon as its engine run id exists
 * and removes it once the run ended and its outcome is recorded. The run live view finds a run to show here, and waits here
 * for the next one. In-process only: another process's runs (or a queue worker's) are never in it.
 */

export interface InFlightRun {
  run_id: string;
  execution_id: string;
  org_id: string;
  automation_id: string;
  dispatch: DispatchKind;
  /** When it was registered (ISO). */
  started_at: string;
}

export type FinishedStatus = 'succeeded' | 'failed' | 'canceled';

export interface RunRegistry {
  /** A run of `automation_id` executing here has its run id (called once per run). */
  started(run: InFlightRun): void;
  /** The run ended (its outcome recorded): listeners are told, then it is forgotten. */
  finished(runId: string, status: FinishedStatus): void;
  get(runId: string): InFlightRun | undefined;
  /** The runs of one automation of the org in flight here, newest first. */
  inFlight(orgId: string, automationId: string): InFlightRun[];
  /** Call `fn` for each run of this automation that starts from now on, until the returned function is called. */
  onStart(orgId: string, automationId: string, fn: (run: InFlightRun) => void): () => void;
  /**
   * Call `fn` once when run `runId` finishes, unless the returned function is called first. The run
   * must be in flight (`get` finds it); otherwise nothing is ever called.
   */
  onFinish(runId: string, fn: (status: FinishedStatus) => void): () => void;
  /** Runs in flight here (all orgs). */
  size(): number;
}

export function createRunRegistry(): RunRegistry {
  const runs = new Map<string, { run: InFlightRun; seq: number; finish: Set<(status: FinishedStatus) => void> }>();
  const starts = new Map<string, Set<(run: InFlightRun) => void>>();
  const keyOf = (orgId: string, automationId: string) => `${orgId}\u0000${automationId}`;
  let seq = 0;

  const call = <A>(fns: Iterable<(a: A) => void>, a: A) => {
    for (const fn of [...fns]) {
      try {
        fn(a);
      } catch {
        // A listener's bug must not stop the run or the other listeners.
      }
    }
  };

  return {
    started(run) {
      if (runs.has(run.run_id)) return;
      runs.set(run.run_id, { run, seq: ++seq, finish: new Set() });
      call(starts.get(keyOf(run.org_id, run.automation_id)) ?? [], run);
    },
    finished(runId, status) {
      const entry = runs.get(runId);
      if (!entry) return;
      runs.delete(runId);
      call(entry.finish, status);
      entry.finish.clear();
    },
    get: (runId) => runs.get(runId)?.run,
    inFlight(orgId, automationId) {
      return [...runs.values()]
        .filter((e) => e.run.org_id === orgId && e.run.automation_id === automationId)
        .sort((a, b) => b.seq - a.seq)
        .map((e) => e.run);
    },
    onStart(orgId, automationId, fn) {
      const key = keyOf(orgId, automationId);
      let set = starts.get(key);
      if (!set) starts.set(key, (set = new Set()));
      set.add(fn);
      return () => {
        set.delete(fn);
        if (set.size === 0 && starts.get(key) === set) starts.delete(key);
      };
    },
    onFinish(runId, fn) {
      const entry = runs.get(runId);
      if (!entry) return () => {};
      entry.finish.add(fn);
      return () => entry.finish.delete(fn);
    },
    size: () => runs.size,
  };
}
