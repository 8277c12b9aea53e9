import { TERMINAL_STATUSES } from '../../run/types.js';
import type { ServiceDeps } from '../context.js';
import { recordOutcome, RUN_QUEUE } from './dispatch.js';

/**
 * The reconcile sweep of worker processes (docs/deploy.md, "Database outage"): the executions index
 * catches up with the engine. A row is written `running` or `queued` when its run starts or is
 * queued, and its end by the process that waits for the run. When that process cannot (it was
 * killed in the middle of a sync run, or the database was away when the run ended), the engine's
 * recovery still ends the run (`worker_lost`, `start_timeout`); this sweep then records that end on
 * the row, with its webhooks, as the waiting process would have (`recordOutcome`, which records an
 * end once however many record it).
 *
 * Each pass reads the unfinished rows older than a grace period, oldest first, a page at a time
 * (at most `maxRowsPerPass`, continuing where the last pass stopped), and looks up each row's run.
 *
 * The orphan sweep rides along: a row whose run is still `pending` (prepared, never started), older
 * than SVC_QUEUE_ORPHAN, whose queue message is gone (a run left by a version that wrote the run and
 * its message apart, or a message dropped after its last retry) has its run ended `failed` with
 * `queue_message_lost` (`Engine.abandon`), and the row with it. A run whose message is there waits,
 * however long (SVC_QUEUE_TIMEOUT still bounds it).
 */

export interface ReconcileLoop {
  /** One pass now (tests, and the first pass at start); resolves with the rows it ended. */
  pass(): Promise<number>;
  stop(): Promise<void>;
}

export interface ReconcileOptions {
  /** Between passes. Default: settings.reconcileIntervalSeconds. */
  intervalMs?: number;
  /** Rows younger than this are left to the process that runs them. Default 10 s. */
  graceMs?: number;
  /** Default 1000. */
  maxRowsPerPass?: number;
}

const TERMINAL = new Set<string>(TERMINAL_STATUSES);
const PAGE = 100;

export function startReconcileLoop(deps: ServiceDeps, options: ReconcileOptions = {}): ReconcileLoop {
  const engine = deps.engine;
  const intervalMs = options.intervalMs ?? deps.settings.reconcileIntervalSeconds * 1000;
  const graceMs = options.graceMs ?? 10_000;
  const maxRows = options.maxRowsPerPass ?? 1000;
  const stopping = new AbortController();
  let cursor: { created_at: string; id: string } | undefined;
  let running: Promise<number> | undefined;

  const orphanMs = deps.settings.queueOrphanSeconds * 1000;
  /** A queued row old enough whose run queue message is neither waiting nor held. */
  const orphaned = async (row: { id: string; created_at: string }): Promise<boolean> =>
    deps.queue !== undefined &&
    Date.parse(row.created_at) <= Date.parse(deps.clock.now()) - orphanMs &&
    !(await deps.queue.has(RUN_QUEUE, { execution_id: row.id }));

  const passOnce = async (): Promise<number> => {
    if (!engine) return 0;
    const createdBefore = new Date(Date.parse(deps.clock.now()) - Math.min(graceMs, orphanMs)).toISOString();
    let ended = 0;
    for (let seen = 0; seen < maxRows && !stopping.signal.aborted; ) {
      const rows = await deps.storage.executions.listUnfinished({ createdBefore, limit: PAGE, ...(cursor ? { after: cursor } : {}) });
      if (rows.length === 0) {
        cursor = undefined; // the next pass starts again from the oldest
        break;
      }
      for (const row of rows) {
        if (stopping.signal.aborted) break;
        const run = await engine.getRun(row.run_id);
        if (!run) {
          if (await deps.storage.executions.finish(row.org_id, row.id, { status: 'failed', finished_at: deps.clock.now(), error_code: 'run_not_found' }))
            ended++;
        } else if (TERMINAL.has(run.status)) {
          await recordOutcome(deps, row, run);
          ended++;
        } else if (run.status === 'pending' && (await orphaned(row))) {
          const message = `the queue message of run ${row.run_id} is gone (the enqueue was cut, or the message was dropped after its retries): it was never started`;
          if (await engine.abandon(row.run_id, { code: 'queue_message_lost', message })) {
            deps.logger.warn(`[flowctl] [service] orphan sweep: ${message}; ended failed (queue_message_lost)`);
          }
          const after = await engine.getRun(row.run_id);
          if (after && TERMINAL.has(after.status)) {
            await recordOutcome(deps, row, after);
            ended++;
          }
        }
      }
      seen += rows.length;
      const last = rows[rows.length - 1]!;
      cursor = { created_at: last.created_at, id: last.id };
      if (rows.length < PAGE) {
        cursor = undefined;
        break;
      }
    }
    if (ended > 0) deps.logger.info(`[flowctl] [service] reconcile: ${ended} execution(s) took the end of their run`);
    return ended;
  };

  const pass = (): Promise<number> => {
    running ??= passOnce().finally(() => (running = undefined));
    return running;
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await pass();
      } catch (err) {
        deps.logger.warn(`[flowctl] [service] reconcile sweep: ${(err as Error)?.message ?? String(err)}; next pass in ${intervalMs} ms`);
      }
      await deps.clock.sleep(intervalMs, stopping.signal).catch(() => undefined);
    }
  })();

  return {
    pass,
    async stop() {
      stopping.abort();
      await loop;
      await running?.catch(() => undefined);
    },
  };
}
