import { isFlowError } from '../errors.js';
import type { QueueMessage, QueueWorker } from '../ports/queue.js';
import { TERMINAL_STATUSES } from '../run/types.js';
import type { ServiceDeps } from './context.js';
import { finishRun, orgRunOptions, recordOutcome, RUN_QUEUE } from './domain/dispatch.js';
import { startReconcileLoop } from './domain/reconcile.js';

/**
 * The run worker (docs/hosted-api.md, "Queue dispatch"): takes messages `{execution_id, org_id}` of
 * the run queue and executes the prepared run by id, in any process over the same database
 * (`SVC_ROLE=worker`, or `all`).
 *
 * Delivery is at least once, so a message can arrive for a run that is already executing or
 * finished (its first holder was presumed dead, or acknowledged too late). The run decides, never
 * the message: the engine executes a run only while it is `pending` (`execute` refuses any other
 * with `run_not_pending`, atomically across processes), so a run is never executed twice. A
 * duplicate delivery waits for the run to end (the engine's watch also recovers a run whose executor
 * is gone, as `worker_lost`) and records its outcome, which is idempotent.
 */

export interface RunWorkerStats {
  /** Messages whose run this worker executed. */
  executed: number;
  /** Messages whose run was already started or finished elsewhere (a redelivery). */
  duplicates: number;
  /** Messages naming no execution of this database (dropped). */
  dropped: number;
}

export interface RunWorker extends QueueWorker {
  readonly stats: Readonly<RunWorkerStats>;
}

const TERMINAL = new Set(TERMINAL_STATUSES);

export async function startRunWorker(deps: ServiceDeps, options: { concurrency?: number } = {}): Promise<RunWorker> {
  const { engine, queue, logger } = deps;
  if (!engine || !queue) throw new Error('[flowctl] [service] a run worker needs an engine and a queue');
  const stats: RunWorkerStats = { executed: 0, duplicates: 0, dropped: 0 };

  const handle = async (message: QueueMessage, signal: AbortSignal): Promise<void> => {
    const { execution_id: executionId, org_id: orgId } = message.data as { execution_id?: unknown; org_id?: unknown };
    if (typeof executionId !== 'string' || typeof orgId !== 'string') {
      stats.dropped++;
      logger.warn(`[flowctl] [service] run queue message ${message.id} has no execution_id/org_id: dropped`);
      return;
    }
    const execution = await deps.storage.executions.get(orgId, executionId);
    if (!execution) {
      stats.dropped++;
      logger.warn(`[flowctl] [service] run queue message ${message.id}: execution ${executionId} does not exist: dropped`);
      return;
    }
    let run = await engine.getRun(execution.run_id);
    if (!run) {
      stats.dropped++;
      logger.warn(`[flowctl] [service] execution ${executionId}: engine run ${execution.run_id} does not exist: dropped`);
      await deps.storage.executions.update(orgId, executionId, { status: 'failed', finished_at: deps.clock.now(), error_code: 'run_not_found' });
      return;
    }
    if (run.status === 'pending') {
      try {
        await deps.storage.executions.update(orgId, executionId, { status: 'running' });
        run = await engine.execute(execution.run_id, { ...orgRunOptions(deps, orgId), signal });
        stats.executed++;
      } catch (err) {
        // Another holder of a redelivered message started it first, or this run was recovered under
        // us: either way the run is someone else's now; wait for its end below.
        if (!isFlowError(err, 'run_not_pending') && !isFlowError(err, 'worker_lost') && !isFlowError(err, 'journal_conflict')) throw err;
        stats.duplicates++;
        run = await engine.getRun(execution.run_id);
      }
    } else {
      stats.duplicates++;
    }
    if (run && !TERMINAL.has(run.status)) {
      // A redelivery usually means the first holder died: the recovery sweep ends its runs now when
      // their process is gone (same host) or their lease lapsed, instead of at the next sweep.
      if (message.attempt > 1)
        await engine.recover().catch((err: unknown) => logger.warn(`[flowctl] [service] recovery sweep: ${(err as Error)?.message ?? String(err)}`));
      await finishRun(deps, execution, signal);
      return;
    }
    if (run && TERMINAL.has(run.status)) await recordOutcome(deps, execution, run);
  };

  const worker = await queue.work(RUN_QUEUE, { concurrency: options.concurrency ?? deps.settings.workerConcurrency }, handle);
  // Rows whose run ended without them (a killed API process, a database outage) take its end.
  const reconcile = startReconcileLoop(deps);
  return {
    stats,
    stop: async (opts) => {
      await Promise.all([worker.stop(opts), reconcile.stop()]);
    },
  };
}
