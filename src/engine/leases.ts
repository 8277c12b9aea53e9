import { digestOf } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import type { RunLease, RunRecord } from '../ports/storage.js';
import { resolveInputs } from '../run/inputs.js';
import { JournalWriter } from '../run/journal-writer.js';
import { contractsOf } from '../run/runner.js';
import type { JournalEntry, StepError } from '../run/types.js';
import { SecretMask } from '../secrets/mask.js';
import { type EngineContext, TERMINAL } from './context.js';

/** Leases and recovery (docs/journal.md, "Leases and recovery"): who executes a run, and closing runs nobody will finish. */
export interface Leases {
  /** Renew the lease of a run this engine executes; see the function's comment. */
  startHeartbeat(runId: string, controller: AbortController): ReturnType<typeof setInterval>;
  /** Close a run that no live process will finish; false when another closer won or it had ended. */
  closeRun(record: RunRecord, status: 'failed' | 'canceled', error: StepError): Promise<boolean>;
  /** Close every pending or running run whose lease expired (or whose process is gone); their ids. */
  recover(): Promise<string[]>;
  /** The lease's time is up, or (recoverDeadPids) its process on this host is gone. */
  lapsed(lease: RunLease | undefined): boolean;
  /** The error a recovered run ends with: `start_timeout` for a prepared run, else `worker_lost`. */
  lostError(record: RunRecord): StepError;
  canceledError(runId: string): StepError;
  /** Start the recovery sweep (once at start on a durable store, then every sweepMs); stop() awaits a sweep in progress. */
  startSweep(): { stop(): Promise<void> };
}

export function createLeases(ctx: EngineContext): Leases {
  const { storage, logger, leaseMs, options } = ctx;

  /**
   * Renew the lease of a run this engine executes, every third of the lease time. Each beat first
   * reads the record: a cancel requested through the store (another engine's `cancel`) aborts the
   * run as canceled; a run closed by someone else (recovery after a stall) aborts it as lost.
   */
  function startHeartbeat(runId: string, controller: AbortController): ReturnType<typeof setInterval> {
    let beating = false;
    const beat = async () => {
      if (beating || controller.signal.aborted) return;
      beating = true;
      try {
        const record = await storage.runs.get(runId);
        if (!record) return;
        if (TERMINAL.has(record.status)) {
          controller.abort(new FlowError('worker_lost', `[flowctl] [engine] run ${runId} was closed by another process (its lease had expired)`));
        } else if (record.cancel_requested) {
          controller.abort(new FlowError('canceled', `[flowctl] [engine] run ${runId} was canceled`));
        } else {
          await storage.runs.update(runId, { lease: ctx.newLease() });
        }
      } catch (err) {
        logger.warn(`[flowctl] [engine] run ${runId}: lease heartbeat failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        beating = false;
      }
    };
    const timer = setInterval(() => void beat(), Math.max(1, Math.floor(leaseMs / 3)));
    timer.unref?.();
    return timer;
  }

  /**
   * Close a run that no live process will finish: append its run_finished (after a run_started when
   * the journal is empty) at the next seq, continuing the hash chain, and settle the record. The
   * journal's expected-seq append makes two closers safe: one wins, the other gets false.
   */
  async function closeRun(record: RunRecord, status: 'failed' | 'canceled', error: StepError): Promise<boolean> {
    const journal = await storage.journal.read(record.id);
    const tail = journal[journal.length - 1];
    if (tail?.event === 'run_finished') {
      await storage.runs.update(record.id, { status: tail.status, finished_at: tail.at, ...(tail.error ? { error: tail.error } : {}) });
      return false;
    }
    let inputs = record.inputs ?? {};
    let inputsDigest = journal[0]?.inputs_digest ?? digestOf(inputs);
    const spec = journal.length === 0 ? await ctx.getSpec(record.flow_digest) : undefined;
    if (spec) {
      try {
        const resolved = resolveInputs(spec, inputs, { allowSecretRefs: true });
        inputs = resolved.inputs;
        inputsDigest = resolved.inputs_digest;
      } catch {
        // A record from before inputs were stored: the run_started names what is known.
      }
    }
    const writer = new JournalWriter({
      runId: record.id,
      store: storage.journal,
      clock: ctx.clock,
      flowDigest: record.flow_digest,
      inputsDigest,
      mask: new SecretMask(),
      logger,
    });
    // Continue the stored chain: the writer appends at the next seq, linked to the last digest.
    writer.entries.push(...journal);
    // The step whose attempt was in flight (or waiting to retry) when the run was closed.
    const step =
      tail && (tail.event === 'step_started' || tail.event === 'effect_recorded' || (tail.event === 'step_failed' && tail.will_retry)) ? tail.step : undefined;
    let finished: JournalEntry;
    try {
      if (journal.length === 0) {
        await writer.append({ event: 'run_started', flow_name: record.flow_name, inputs, contracts: spec ? contractsOf(spec) : [] });
      }
      finished = await writer.append({ event: 'run_finished', status, error: { ...error, ...(step !== undefined ? { step } : {}) } });
    } catch (err) {
      if (isFlowError(err) && err.code === 'journal_conflict') return false;
      throw err;
    }
    await storage.runs.update(record.id, { status, finished_at: finished.at, error: { ...error, ...(step !== undefined ? { step } : {}) } });
    logger.warn(`[flowctl] [engine] run ${record.id} ${status}: ${error.code}: ${error.message}`);
    return true;
  }

  const leaseExpired = (lease: RunLease | undefined): boolean => lease !== undefined && !(Date.parse(lease.expires_at) > Date.now());
  const ownerGone = (lease: RunLease | undefined): boolean => {
    if (!lease || options.recoverDeadPids !== true || lease.host !== ctx.host || lease.pid === undefined) return false;
    if (lease.pid === process.pid) return false; // this process is alive
    try {
      process.kill(lease.pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  };
  const lapsed = (lease: RunLease | undefined): boolean => leaseExpired(lease) || ownerGone(lease);

  const lostError = (record: RunRecord): StepError =>
    record.lease?.prepared
      ? {
          code: 'start_timeout',
          message: `[flowctl] [engine] no executor started the prepared run ${record.id} before its start deadline (${record.lease.expires_at}); it was ended by recovery and is not executed`,
          retryable: false,
        }
      : lostErrorOf(record);
  const lostErrorOf = (record: RunRecord): StepError => ({
    code: 'worker_lost',
    message: `[flowctl] [engine] the process executing run ${record.id} is gone (its lease${record.lease ? ` held by ${record.lease.owner}${record.lease.pid !== undefined ? ` pid ${record.lease.pid}` : ''} expired at ${record.lease.expires_at}` : ' expired'}); the run was ended by recovery and is not executed again`,
    retryable: false,
  });
  const canceledError = (runId: string): StepError => ({ code: 'canceled', message: `[flowctl] [engine] run ${runId} was canceled`, retryable: false });

  async function recover(): Promise<string[]> {
    ctx.alive();
    const recovered: string[] = [];
    for (const record of await storage.runs.list({ status: ['pending', 'running'] })) {
      if (ctx.inflight.has(record.id) || !record.lease) continue;
      if (!lapsed(record.lease)) continue;
      const closed = record.cancel_requested
        ? await closeRun(record, 'canceled', canceledError(record.id))
        : await closeRun(record, 'failed', lostError(record));
      if (closed) recovered.push(record.id);
    }
    return recovered;
  }

  function startSweep(): { stop(): Promise<void> } {
    // One sweep at a time.
    let sweeping: Promise<unknown> | undefined;
    const sweep = () => {
      if (ctx.disposed || sweeping) return;
      sweeping = recover()
        .catch((err: unknown) => logger.warn(`[flowctl] [engine] recovery sweep failed: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => (sweeping = undefined));
    };
    if (options.storage.flags?.durable) sweep();
    const sweepTimer = ctx.sweepMs > 0 ? setInterval(sweep, ctx.sweepMs) : undefined;
    sweepTimer?.unref?.();
    return {
      async stop() {
        if (sweepTimer) clearInterval(sweepTimer);
        await sweeping;
      },
    };
  }

  return { startHeartbeat, closeRun, recover, lapsed, lostError, canceledError, startSweep };
}
