import { FlowError } from '../errors.js';
import type { JournalEntry, RunStatus } from '../run/types.js';
import { type EngineContext, TERMINAL } from './context.js';
import type { Leases } from './leases.js';
import { getRun } from './run-view.js';

/**
 * Cancel a run wherever it executes: in this engine by its abort controller, elsewhere by the
 * store's cancel flag (its executor's heartbeat sees it), and closed here when nobody executes it.
 */
export async function cancelRun(
  ctx: EngineContext,
  leases: Leases,
  runId: string,
  cancelOptions: { signal?: AbortSignal } = {},
): Promise<{ run_id: string; status: RunStatus }> {
  const { storage } = ctx;
  ctx.alive();
  const first = await storage.runs.get(runId);
  if (!first) throw new FlowError('not_found', `[flowctl] [engine] run ${runId} not found`);
  const result = async () => ({ run_id: runId, status: (await getRun(storage, runId))!.status });
  if (TERMINAL.has(first.status)) return result();
  const local = ctx.inflight.get(runId);
  if (local) {
    local.controller.abort(new FlowError('canceled', `[flowctl] [engine] run ${runId} was canceled`));
    await local.done;
    return result();
  }
  await storage.runs.update(runId, { cancel_requested: true });
  // Bounded: each round either sees the run end, closes it, or waits at most half a lease for its
  // executor's heartbeat (which sees the flag) or for its lease to expire.
  for (let round = 0; round < 100_000; round++) {
    if (cancelOptions.signal?.aborted) throw new FlowError('canceled', `[flowctl] [engine] waiting for run ${runId} to cancel was aborted`);
    const record = (await storage.runs.get(runId))!;
    const journal = await storage.journal.read(runId);
    if (journal[journal.length - 1]?.event === 'run_finished') return result();
    // Nobody executes it (prepared, never started) or its executor is gone: close it here.
    if (!record.lease || record.lease.prepared || leases.lapsed(record.lease)) {
      await leases.closeRun(record, 'canceled', leases.canceledError(runId));
      continue;
    }
    const wait = new AbortController();
    const timer = setTimeout(() => wait.abort(), Math.max(1, Math.floor(ctx.leaseMs / 2)));
    const signal = cancelOptions.signal ? AbortSignal.any([cancelOptions.signal, wait.signal]) : wait.signal;
    try {
      for await (const entry of storage.journal.watch(runId, { fromSeq: journal.length, signal })) {
        if (entry.event === 'run_finished') return result();
      }
    } finally {
      clearTimeout(timer);
    }
  }
  throw new FlowError('cancel_timeout', `[flowctl] [engine] run ${runId} did not end after its cancel`);
}

/**
 * The journal as it grows, ending when the run is terminal by any path. Every lease time without a
 * new entry, the run's lease is checked: an executor that is gone is recovered here, so a watch
 * never waits on a dead process.
 */
export async function* watchRun(
  ctx: EngineContext,
  leases: Leases,
  runId: string,
  watchOptions: { fromSeq?: number; signal?: AbortSignal } = {},
): AsyncGenerator<JournalEntry> {
  const { storage, leaseMs } = ctx;
  let next = Math.max(0, watchOptions.fromSeq ?? 0);
  for (let round = 0; round < 1_000_000; round++) {
    if (watchOptions.signal?.aborted) return;
    const idle = new AbortController();
    let timer = setTimeout(() => idle.abort(), leaseMs);
    const signal = watchOptions.signal ? AbortSignal.any([watchOptions.signal, idle.signal]) : idle.signal;
    try {
      for await (const entry of storage.journal.watch(runId, { fromSeq: next, signal })) {
        next = entry.seq + 1;
        yield entry;
        if (entry.event === 'run_finished') return;
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(), leaseMs);
      }
    } finally {
      clearTimeout(timer);
    }
    if (watchOptions.signal?.aborted || !idle.signal.aborted) return; // ended by the store: the run finished before `next`
    const record = await storage.runs.get(runId);
    if (!record) return;
    if (!ctx.inflight.has(runId) && leases.lapsed(record.lease) && !TERMINAL.has(record.status)) {
      await (record.cancel_requested
        ? leases.closeRun(record, 'canceled', leases.canceledError(runId))
        : leases.closeRun(record, 'failed', leases.lostError(record)));
    }
  }
}
