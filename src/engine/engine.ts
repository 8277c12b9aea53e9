import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { deepFreeze, digestOf, type Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { RunLease, RunPatch, RunRecord } from '../ports/storage.js';
import { summarizeEffects } from '../run/effects.js';
import { resolveInputs, type ResolvedInputs } from '../run/inputs.js';
import { JournalWriter } from '../run/journal-writer.js';
import { createLiveSource } from '../run/live-source.js';
import { createRecordedSource } from '../run/recorded-source.js';
import { checkReplayComplete, createVerifyCheck, planReplay } from '../run/replay.js';
import { rememberJournalTexts } from '../run/run-json.js';
import { parseRun } from '../run/run-schema.js';
import { contractsOf, executeRun, type RunOutcome } from '../run/runner.js';
import type { JournalEntry, Run, RunStartedEntry, RunStatus, StepError } from '../run/types.js';
import type { SecretStore } from '../ports/secrets.js';
import { SecretMask } from '../secrets/mask.js';
import { resolveSecretInputs } from '../secrets/preflight.js';
import { builtinTools } from '../tools/builtins/index.js';
import { checkToolPolicy } from '../tools/policy.js';
import { createToolRegistry } from '../tools/registry.js';
import { createRunScope } from '../tools/run-scope.js';
import { cryptoIds, silentLogger, systemClock } from './defaults.js';
import { isConnectionError } from '../util/connection-errors.js';
import { assertFlowSpec } from './spec-guard.js';
import { createStorageRuntime } from './storage-runtime.js';
import type { Engine, EngineOptions, ReplayMode, ReplaySource, RunOptions, RunTarget } from './types.js';

const DEFAULT_FRONT = 'rest';
const DEFAULT_LEASE_MS = 30_000;
const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'canceled']);

interface Launch {
  runId: string;
  spec: FlowSpec;
  flowDigest: Digest;
  resolved: ResolvedInputs;
  replayOf?: RunStartedEntry['replay_of'];
  /** Hermetic or verify replay: answer from this journal instead of running tools. */
  recorded?: { journal: JournalEntry[]; verify: boolean };
  /** The run record's started_at. */
  startedAt: string;
  /** The entries this process appended and their JSON texts, once the run executed (as stored). */
  journal?: readonly JournalEntry[];
  texts?: readonly string[];
  /** Secret values resolved before the run was created: the run's mask knows them from its first entry. */
  secretValues?: string[];
  /** The run's own secret store (RunOptions.secrets), else the engine's. */
  secrets?: SecretStore;
}

/**
 * The engine: deploys, runs, replays and journal watches over one Storage. See docs/journal.md.
 *
 * Defaults: system clock, crypto uuid v4 ids, a silent logger, the built-in tools, in-process
 * execution, no secret store, `process.cwd()` for relative paths.
 */
export function createEngine(options: EngineOptions): Engine {
  if (!options?.storage) throw new FlowError('invalid_options', '[flowctl] [engine] createEngine needs a storage adapter');
  const storage = createStorageRuntime(options.storage);
  const clock = options.clock ?? systemClock();
  const ids = options.ids ?? cryptoIds();
  const logger = options.logger ?? silentLogger();
  const tools = options.tools ?? createToolRegistry(builtinTools());
  const cwd = options.cwd ?? process.cwd();
  if (options.toolPolicy !== undefined) checkToolPolicy(options.toolPolicy);
  // A run's own policy is checked before its run record exists.
  const checkRunPolicy = (runOptions: RunOptions | undefined) => {
    if (runOptions?.toolPolicy !== undefined) checkToolPolicy(runOptions.toolPolicy);
  };
  // Runs in flight (sync and async), so dispose can cancel and await them.
  const inflight = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  let disposed = false;
  // Leases (docs/journal.md, "Leases and recovery"): this engine instance's owner id, and lease times
  // in wall-clock ms (Date.now, not the injected clock: a lease is about liveness, not journal time).
  const owner = randomUUID();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) throw new FlowError('invalid_options', '[flowctl] [engine] leaseMs must be a positive number');
  const sweepMs = options.sweepMs ?? (options.storage.flags?.durable ? leaseMs : 0);
  const host = hostname();
  const newLease = (): RunLease => ({ owner, expires_at: new Date(Date.now() + leaseMs).toISOString(), pid: process.pid, host });
  // A store that applies a record change atomically with a journal append (flags.appendUpdatesRun)
  // gets the run's `running` with its run_started and its end with its run_finished: two writes fewer
  // per run, and the record never lags the journal.
  const recordWithEntries = options.storage.flags?.appendUpdatesRun === true;
  const durable = options.storage.flags?.durable === true;

  const alive = () => {
    if (disposed) throw new FlowError('engine_disposed', '[flowctl] [engine] the engine was disposed');
  };

  async function putSpec(spec: FlowSpec): Promise<Digest> {
    alive();
    assertFlowSpec(spec);
    const digest = digestOf(spec);
    await storage.specs.put(digest, spec);
    return digest;
  }

  // FlowSpecs are immutable and named by their digest, so a read one can be kept: a run by name then
  // costs one deploy lookup (which may move, so it is never cached) and no spec read or copy.
  const specCache = new Map<Digest, FlowSpec>();
  const SPEC_CACHE_SIZE = 256;
  async function getSpec(digest: Digest): Promise<FlowSpec | undefined> {
    const cached = specCache.get(digest);
    if (cached) return cached;
    const spec = await storage.specs.get(digest);
    if (spec) {
      if (specCache.size >= SPEC_CACHE_SIZE) specCache.delete(specCache.keys().next().value!);
      specCache.set(digest, deepFreeze(spec));
    }
    return spec;
  }

  async function resolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec } | undefined> {
    alive();
    if ('spec' in target) return { digest: await putSpec(target.spec), spec: target.spec };
    const digest = 'digest' in target ? target.digest : await storage.deploys.get(target.front ?? DEFAULT_FRONT, target.name);
    if (!digest) return undefined;
    const spec = await getSpec(digest);
    return spec && { digest, spec };
  }

  async function mustResolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec }> {
    const found = await resolve(target);
    if (found) return found;
    const what =
      'name' in target
        ? `flow "${target.name}" is not deployed on front "${target.front ?? DEFAULT_FRONT}"`
        : `no FlowSpec ${'digest' in target ? target.digest : ''} is stored`;
    throw new FlowError('not_found', `[flowctl] [engine] ${what}`);
  }

  /** Validate inputs (before anything exists), then create the run record: status pending. */
  async function create(
    target: RunTarget | { resolved: { digest: Digest; spec: FlowSpec } },
    inputs: Record<string, unknown> | undefined,
    extra: Pick<Partial<Launch>, 'replayOf' | 'recorded' | 'secrets'> = {},
    // This engine's lease: it executes the run at once (run, start, replay). Prepare gives null (no
    // process executes it yet) or its start deadline (a `prepared` lease).
    lease: RunLease | null = newLease(),
    // Prepare's `store`: the caller writes the record (in a transaction of its own).
    write: (record: RunRecord) => Promise<void> = (record) => storage.runs.create(record),
  ): Promise<Launch> {
    // `resolved`: a spec the caller already checked, digested and stored (replay).
    const { digest, spec } = 'resolved' in target ? target.resolved : await mustResolve(target);
    // A recorded replay resolves no secret: its journaled references are taken as they are.
    const resolved = resolveInputs(spec, inputs ?? {}, { allowSecretRefs: options.allowSecretRefs === true || extra.recorded !== undefined });
    // A live run resolves its secret inputs first: a missing one is `secret_not_found` before any
    // run record, browser or outward effect exists (docs/journal.md, "Secrets").
    const secretValues = extra.recorded ? [] : await resolveSecretInputs(spec, resolved.inputs, extra.secrets ?? options.secrets);
    const launch: Launch = { runId: ids.uuid(), spec, flowDigest: digest, resolved, startedAt: clock.now(), secretValues, ...extra };
    const record: RunRecord = {
      id: launch.runId,
      flow_digest: digest,
      flow_name: spec.name,
      status: 'pending',
      started_at: launch.startedAt,
      ...(extra.replayOf ? { replay_of: extra.replayOf.run_id } : {}),
      inputs: resolved.inputs,
      ...(lease ? { lease } : {}),
    };
    await write(record);
    return launch;
  }

  /** A stored run, ready to execute here: its spec, its stored inputs re-resolved and its secrets. */
  async function launchOf(record: RunRecord, runOptions: RunOptions): Promise<Launch> {
    const spec = await getSpec(record.flow_digest);
    if (!spec) throw new FlowError('not_found', `[flowctl] [engine] the FlowSpec ${record.flow_digest} of run ${record.id} is not stored`);
    // The stored inputs were validated by prepare; their secret inputs are references already.
    const resolved = resolveInputs(spec, record.inputs ?? {}, { allowSecretRefs: true });
    const secrets = runOptions.secrets ?? options.secrets;
    const secretValues = await resolveSecretInputs(spec, resolved.inputs, secrets);
    return {
      runId: record.id,
      spec,
      flowDigest: record.flow_digest,
      resolved,
      startedAt: record.started_at,
      secretValues,
      ...(runOptions.secrets ? { secrets: runOptions.secrets } : {}),
    };
  }

  function execute(launch: Launch, runOptions: RunOptions = {}, abortFirst?: FlowError): Promise<RunOutcome> {
    const controller = new AbortController();
    if (abortFirst) controller.abort(abortFirst);
    const signal = runOptions.signal ? AbortSignal.any([runOptions.signal, controller.signal]) : controller.signal;
    const heartbeat = startHeartbeat(launch.runId, controller);
    // Recovery closed the run under us (our lease had expired): our own closing append then
    // conflicts with the recovered journal. The caller learns why, not that an append failed.
    const lost = (err: unknown): unknown => {
      const reason: unknown = controller.signal.reason;
      return isFlowError(reason) && reason.code === 'worker_lost' && isFlowError(err) && err.code === 'journal_conflict' ? reason : err;
    };
    const done = executeLaunch(launch, runOptions, signal)
      .then(
        (outcome) => (outcome.fatal ? { ...outcome, fatal: lost(outcome.fatal) as typeof outcome.fatal } : outcome),
        (err: unknown) => {
          throw lost(err);
        },
      )
      .finally(() => {
        clearInterval(heartbeat);
        inflight.delete(launch.runId);
      });
    inflight.set(launch.runId, { controller, done: done.catch(() => undefined) });
    return done;
  }

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
          await storage.runs.update(runId, { lease: newLease() });
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

  async function executeLaunch(launch: Launch, runOptions: RunOptions, signal: AbortSignal): Promise<RunOutcome> {
    const { runId, spec, resolved } = launch;
    const mask = new SecretMask();
    for (const value of launch.secretValues ?? []) mask.add(value);
    const writer = new JournalWriter({
      runId,
      store: storage.journal,
      clock,
      flowDigest: launch.flowDigest,
      inputsDigest: resolved.inputs_digest,
      mask,
      logger,
      onEntry: runOptions.onEntry,
      check: launch.recorded?.verify ? createVerifyCheck(launch.recorded.journal) : undefined,
      ...(recordWithEntries ? { runPatch: recordPatchOf } : {}),
    });
    const scope = createRunScope();
    const confirm = runOptions.confirm;
    const source = launch.recorded
      ? createRecordedSource(launch.recorded.journal, writer)
      : createLiveSource({
          runId,
          spec,
          inputs: resolved.inputs,
          tools,
          executor: options.executor,
          secrets: launch.secrets ?? options.secrets,
          mask,
          clock,
          logger,
          cwd,
          toolOptions: options.toolOptions,
          policy: runOptions.toolPolicy ?? options.toolPolicy,
          ...(runOptions.files ? { files: runOptions.files } : {}),
          scope,
          artifacts: storage.artifacts,
          confirm: confirm
            ? async () => {
                try {
                  return await confirm(summarizeEffects(spec, resolved.inputs));
                } catch (err) {
                  logger.warn(`[flowctl] [engine] run ${runId}: confirm threw, treated as "no": ${mask.maskError(err)}`);
                  return false;
                }
              }
            : undefined,
        });
    let outcome: RunOutcome;
    try {
      outcome = await executeRun({
        spec,
        inputs: resolved.inputs,
        inputsDigest: resolved.inputs_digest,
        writer,
        source,
        mask,
        logger,
        signal,
        replayOf: launch.replayOf,
        // A store that updates the record with the entry already made the run `running` with run_started.
        ...(recordWithEntries ? {} : { onStarted: () => storage.runs.update(runId, { status: 'running' }) }),
      });
    } finally {
      launch.journal = writer.entries;
      launch.texts = writer.texts;
      await scope.dispose().catch((err: unknown) => logger.warn(`[flowctl] [engine] run ${runId}: disposing run resources failed: ${mask.maskError(err)}`));
    }
    if (launch.recorded?.verify && !outcome.fatal) outcome.fatal = checkReplayComplete(launch.recorded.journal, writer.entries.length);
    const last = writer.last;
    // Another writer owns this run's journal (a second executor took it first, or recovery or a cancel
    // closed it): its record is theirs to settle, not ours.
    if (last?.event !== 'run_finished' && outcome.fatal?.code === 'journal_conflict') return outcome;
    // Our run_finished was stored, and with it the record's end (recordPatchOf): nothing left to write.
    if (recordWithEntries && last?.event === 'run_finished') return logOutcome(runId, outcome);
    // The database went away under the run and its run_finished was not stored: a terminal record
    // over a journal without its end would hide the run from recovery. Left `running`, its lease
    // lapses and the sweep (any process) closes it with a run_finished at the next seq, continuing
    // the chain (docs/deploy.md, "Database outage").
    if (durable && last?.event !== 'run_finished' && (isFlowError(outcome.fatal, 'db_unreachable') || isConnectionError(outcome.fatal))) {
      logger.warn(`[flowctl] [engine] run ${runId}: the database became unreachable; the run is left to recovery (worker_lost once its lease lapses)`);
      return outcome;
    }
    try {
      await storage.runs.update(runId, {
        status: outcome.status,
        ...(last?.event === 'run_finished' ? { finished_at: last.at } : {}),
        ...(outcome.output !== undefined ? { output: outcome.output } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
      });
    } catch (err) {
      outcome.fatal ??= err as FlowError;
    }
    return logOutcome(runId, outcome);
  }

  function logOutcome(runId: string, outcome: RunOutcome): RunOutcome {
    const level = outcome.status === 'succeeded' ? 'info' : 'warn';
    logger[level](`[flowctl] [engine] run ${runId} ${outcome.status}${outcome.error ? `: ${outcome.error.code}: ${outcome.error.message}` : ''}`);
    return outcome;
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
    const spec = journal.length === 0 ? await getSpec(record.flow_digest) : undefined;
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
      clock,
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
    if (!lease || options.recoverDeadPids !== true || lease.host !== host || lease.pid === undefined) return false;
    if (lease.pid === process.pid) return false; // this process is alive
    try {
      process.kill(lease.pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  };

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

  const notifyRunId = (runOptions: RunOptions | undefined, runId: string): void => {
    try {
      runOptions?.onRunId?.(runId);
    } catch (err) {
      logger.warn(`[flowctl] [engine] onRunId listener threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  async function recover(): Promise<string[]> {
    alive();
    const recovered: string[] = [];
    for (const record of await storage.runs.list({ status: ['pending', 'running'] })) {
      if (inflight.has(record.id) || !record.lease) continue;
      if (!leaseExpired(record.lease) && !ownerGone(record.lease)) continue;
      const closed = record.cancel_requested
        ? await closeRun(record, 'canceled', canceledError(record.id))
        : await closeRun(record, 'failed', lostError(record));
      if (closed) recovered.push(record.id);
    }
    return recovered;
  }

  // The sweep: once at start on a durable store, then every sweepMs. One at a time.
  let sweeping: Promise<unknown> | undefined;
  const sweep = () => {
    if (disposed || sweeping) return;
    sweeping = recover()
      .catch((err: unknown) => logger.warn(`[flowctl] [engine] recovery sweep failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => (sweeping = undefined));
  };
  if (options.storage.flags?.durable) sweep();
  const sweepTimer = sweepMs > 0 ? setInterval(sweep, sweepMs) : undefined;
  sweepTimer?.unref?.();

  async function cancel(runId: string, cancelOptions: { signal?: AbortSignal } = {}): Promise<{ run_id: string; status: RunStatus }> {
    alive();
    const first = await storage.runs.get(runId);
    if (!first) throw new FlowError('not_found', `[flowctl] [engine] run ${runId} not found`);
    const result = async () => ({ run_id: runId, status: (await getRun(runId))!.status });
    if (TERMINAL.has(first.status)) return result();
    const local = inflight.get(runId);
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
      if (!record.lease || record.lease.prepared || leaseExpired(record.lease) || ownerGone(record.lease)) {
        await closeRun(record, 'canceled', canceledError(runId));
        continue;
      }
      const wait = new AbortController();
      const timer = setTimeout(() => wait.abort(), Math.max(1, Math.floor(leaseMs / 2)));
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
  async function* watch(runId: string, watchOptions: { fromSeq?: number; signal?: AbortSignal } = {}): AsyncGenerator<JournalEntry> {
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
      if (!inflight.has(runId) && (leaseExpired(record.lease) || ownerGone(record.lease)) && !TERMINAL.has(record.status)) {
        await (record.cancel_requested ? closeRun(record, 'canceled', canceledError(runId)) : closeRun(record, 'failed', lostError(record)));
      }
    }
  }

  async function getRun(id: string): Promise<Run | undefined> {
    const record = await storage.runs.get(id);
    if (!record) return undefined;
    return parseRun(runOf(record, await storage.journal.read(id)), 'engine');
  }

  async function finish(launch: Launch, outcome: RunOutcome): Promise<Run> {
    if (outcome.fatal) throw outcome.fatal;
    // The run's whole journal was appended by this process, each entry acknowledged by storage: the
    // Run is built from those entries as getRun builds it from the stored ones, without reading them
    // back.
    const journal = launch.journal;
    const finished = journal?.[journal.length - 1];
    if (finished?.event === 'run_finished' && journal!.length === finished.seq + 1) {
      const run = runOf({ id: launch.runId, flow_digest: launch.flowDigest, status: 'running', started_at: launch.startedAt }, [...journal!]);
      if (launch.texts) rememberJournalTexts(run.journal, launch.texts);
      return run;
    }
    const run = await getRun(launch.runId);
    if (!run) throw new FlowError('not_found', `[flowctl] [engine] run ${launch.runId} vanished from storage`);
    return run;
  }

  async function replay(source: ReplaySource, replayOptions: { mode?: ReplayMode; spec?: FlowSpec } & RunOptions = {}): Promise<Run> {
    alive();
    checkRunPolicy(replayOptions);
    const mode = replayOptions.mode ?? 'hermetic';
    if (!['hermetic', 'verify', 'rerun'].includes(mode)) {
      throw new FlowError('invalid_replay_mode', `[flowctl] [replay] mode must be hermetic, verify or rerun, not "${String(mode)}"`);
    }
    let journal: unknown;
    let originalId: string | undefined;
    let spec = replayOptions.spec;
    if ('run_id' in source && !('journal' in source)) {
      const record = await storage.runs.get(source.run_id);
      if (!record) throw new FlowError('not_found', `[flowctl] [replay] run ${source.run_id} not found`);
      journal = await storage.journal.read(source.run_id);
      originalId = record.id;
      spec ??= await getSpec(record.flow_digest);
      if (!spec) throw new FlowError('not_found', `[flowctl] [replay] the FlowSpec ${record.flow_digest} of run ${record.id} is not stored`);
    } else {
      journal = source.journal;
      originalId = source.run_id;
      if (!spec) {
        const first = Array.isArray(journal) ? (journal[0] as { flow_digest?: Digest } | undefined) : undefined;
        spec = first?.flow_digest ? await getSpec(first.flow_digest) : undefined;
        if (!spec) throw new FlowError('not_found', "[flowctl] [replay] no FlowSpec given and the journal's flow is not stored; pass options.spec");
      }
    }
    assertFlowSpec(spec);
    const plan = planReplay(spec, journal, mode);
    const replayOf = { run_id: originalId ?? plan.started.digest, mode };
    await storage.specs.put(plan.flow_digest, spec);
    const launch = await create({ resolved: { digest: plan.flow_digest, spec } }, plan.started.inputs, {
      replayOf,
      ...(mode === 'rerun' ? {} : { recorded: { journal: plan.journal, verify: mode === 'verify' } }),
    });
    const runOptions: RunOptions = { ...replayOptions, ...(mode === 'rerun' ? {} : { confirm: undefined }) };
    return finish(launch, await execute(launch, runOptions));
  }

  return {
    async deploy(name, spec, deployOptions = {}) {
      alive();
      if (typeof name !== 'string' || name.trim() === '') throw new FlowError('invalid_name', '[flowctl] [engine] a deploy needs a flow name');
      const digest = await putSpec(spec);
      await storage.deploys.set(deployOptions.front ?? DEFAULT_FRONT, name, digest);
      return digest;
    },
    putSpec,
    resolve,
    async run(target, inputs, runOptions) {
      alive();
      checkRunPolicy(runOptions);
      const launch = await create(target, inputs, runOptions?.secrets ? { secrets: runOptions.secrets } : {});
      notifyRunId(runOptions, launch.runId);
      return finish(launch, await execute(launch, runOptions));
    },
    async prepare(target, inputs, prepareOptions) {
      alive();
      const within = prepareOptions?.startWithinMs;
      if (within !== undefined && !(Number.isFinite(within) && within > 0))
        throw new FlowError('invalid_options', '[flowctl] [engine] startWithinMs must be a positive number of milliseconds');
      const deadline: RunLease | null = within === undefined ? null : { owner, expires_at: new Date(Date.now() + within).toISOString(), prepared: true };
      const launch = await create(target, inputs, prepareOptions?.secrets ? { secrets: prepareOptions.secrets } : {}, deadline, prepareOptions?.store);
      return { run_id: launch.runId, status: 'pending' };
    },
    async abandon(runId, error) {
      alive();
      const record = await storage.runs.get(runId);
      if (record?.status !== 'pending' || inflight.has(runId)) return false;
      // An executor's lease (not a prepared run's start deadline): it started, leave it to its lease.
      if (record.lease && !record.lease.prepared) return false;
      if ((await storage.journal.read(runId, 0)).length > 0) return false;
      return closeRun(record, 'failed', { code: error.code, message: error.message, retryable: false });
    },
    async execute(runId, runOptions = {}) {
      alive();
      checkRunPolicy(runOptions);
      const record = await storage.runs.get(runId);
      if (!record) throw new FlowError('not_found', `[flowctl] [engine] run ${runId} not found`);
      const entries = await storage.journal.read(runId, 0);
      if (record.status !== 'pending' || entries.length > 0 || inflight.has(runId)) {
        throw new FlowError(
          'run_not_pending',
          `[flowctl] [engine] run ${runId} is ${record.status === 'pending' ? 'already executing' : record.status}: only a prepared run that has not started can be executed`,
          { data: { run_id: runId, status: record.status } },
        );
      }
      const launch = await launchOf(record, runOptions);
      await storage.runs.update(runId, { lease: newLease() });
      notifyRunId(runOptions, runId);
      // A cancel that came before the run started: it starts and ends at once, canceled.
      const canceled = record.cancel_requested ? new FlowError('canceled', `[flowctl] [engine] run ${runId} was canceled`) : undefined;
      return finish(launch, await execute(launch, runOptions, canceled));
    },
    cancel,
    recover,
    async start(target, inputs, runOptions) {
      alive();
      checkRunPolicy(runOptions);
      const launch = await create(target, inputs, runOptions?.secrets ? { secrets: runOptions.secrets } : {});
      execute(launch, runOptions).catch((err: unknown) => {
        logger.error(`[flowctl] [engine] run ${launch.runId} could not be completed: ${err instanceof Error ? err.message : String(err)}`);
      });
      return { run_id: launch.runId, status: 'pending' };
    },
    getRun(id) {
      alive();
      return getRun(id);
    },
    async getArtifact(digest) {
      alive();
      return storage.artifacts?.get(digest);
    },
    listRuns(query) {
      alive();
      return storage.runs.list(query);
    },
    replay,
    watch(runId, watchOptions) {
      alive();
      return watch(runId, watchOptions);
    },
    summarizeEffects(spec, inputs) {
      return summarizeEffects(spec, inputs);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      if (sweepTimer) clearInterval(sweepTimer);
      await sweeping;
      for (const { controller } of inflight.values()) controller.abort(new FlowError('canceled', '[flowctl] [engine] the engine is shutting down'));
      await Promise.all([...inflight.values()].map((r) => r.done));
      await options.executor?.dispose?.();
      await storage.dispose();
    },
  };
}

/** The run record change that goes with an executed run's entry (see recordWithEntries). */
function recordPatchOf(entry: JournalEntry): RunPatch | undefined {
  if (entry.event === 'run_started') return { status: 'running' };
  if (entry.event !== 'run_finished') return undefined;
  return {
    status: entry.status,
    finished_at: entry.at,
    ...(entry.output !== undefined ? { output: entry.output } : {}),
    ...(entry.error ? { error: entry.error } : {}),
  };
}

/**
 * A Run from its record and journal. The journal is the source of truth: its run_finished decides
 * status, finish time and output even if the record's last update was lost.
 */
function runOf(record: Pick<RunRecord, 'id' | 'flow_digest' | 'status' | 'started_at' | 'finished_at' | 'output'>, journal: JournalEntry[]): Run {
  const finished = journal.findLast((e) => e.event === 'run_finished');
  const status = finished?.event === 'run_finished' ? finished.status : record.status;
  const finishedAt = finished?.at ?? record.finished_at;
  const output = finished?.event === 'run_finished' ? finished.output : record.output;
  return {
    id: record.id,
    flow_digest: record.flow_digest,
    status,
    started_at: record.started_at,
    ...(finishedAt !== undefined && status !== 'pending' && status !== 'running' ? { finished_at: finishedAt } : {}),
    journal,
    ...(status === 'succeeded' && output !== undefined ? { output } : {}),
  };
}
