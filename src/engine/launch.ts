import type { Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { SecretStore } from '../ports/secrets.js';
import type { RunLease, RunPatch, RunRecord } from '../ports/storage.js';
import { summarizeEffects } from '../run/effects.js';
import { type ResolvedInputs, resolveInputs } from '../run/inputs.js';
import { JournalWriter } from '../run/journal-writer.js';
import { createLiveSource } from '../run/live-source.js';
import { createRecordedSource } from '../run/recorded-source.js';
import { checkReplayComplete, createVerifyCheck } from '../run/replay.js';
import { executeRun, type RunOutcome } from '../run/runner.js';
import type { JournalEntry, RunStartedEntry } from '../run/types.js';
import { SecretMask } from '../secrets/mask.js';
import { resolveSecretInputs } from '../secrets/preflight.js';
import { createRunScope } from '../tools/run-scope.js';
import { isConnectionError } from '../util/connection-errors.js';
import type { EngineContext } from './context.js';
import type { Leases } from './leases.js';
import type { RunOptions, RunTarget } from './types.js';

/** A run this process is about to execute, or executed: what it runs, and what it wrote. */
export interface Launch {
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

export interface Launcher {
  /**
   * Validate inputs (before anything exists), then create the run record: status pending. `lease`:
   * this engine's (it executes the run at once: run, start, replay) by default; prepare gives null
   * (no process executes it yet) or its start deadline (a `prepared` lease). `write`: prepare's
   * `store`, the caller writes the record (in a transaction of its own).
   */
  create(
    target: RunTarget | { resolved: { digest: Digest; spec: FlowSpec } },
    inputs: Record<string, unknown> | undefined,
    extra?: Pick<Partial<Launch>, 'replayOf' | 'recorded' | 'secrets'>,
    lease?: RunLease | null,
    write?: (record: RunRecord) => Promise<void>,
  ): Promise<Launch>;
  /** A stored run, ready to execute here: its spec, its stored inputs re-resolved and its secrets. */
  launchOf(record: RunRecord, runOptions: RunOptions): Promise<Launch>;
  /** Execute a launch under this engine's lease, tracked in flight until it ends. */
  execute(launch: Launch, runOptions?: RunOptions, abortFirst?: FlowError): Promise<RunOutcome>;
  /** Tell RunOptions.onRunId the run's id; a listener that throws is logged, not fatal. */
  notifyRunId(runOptions: RunOptions | undefined, runId: string): void;
}

export function createLauncher(ctx: EngineContext, leases: Leases): Launcher {
  const { storage, clock, logger, options, recordWithEntries } = ctx;

  async function create(
    target: RunTarget | { resolved: { digest: Digest; spec: FlowSpec } },
    inputs: Record<string, unknown> | undefined,
    extra: Pick<Partial<Launch>, 'replayOf' | 'recorded' | 'secrets'> = {},
    lease: RunLease | null = ctx.newLease(),
    write: (record: RunRecord) => Promise<void> = (record) => storage.runs.create(record),
  ): Promise<Launch> {
    // `resolved`: a spec the caller already checked, digested and stored (replay).
    const { digest, spec } = 'resolved' in target ? target.resolved : await ctx.mustResolve(target);
    // A recorded replay resolves no secret: its journaled references are taken as they are.
    const resolved = resolveInputs(spec, inputs ?? {}, { allowSecretRefs: options.allowSecretRefs === true || extra.recorded !== undefined });
    // A live run resolves its secret inputs first: a missing one is `secret_not_found` before any
    // run record, browser or outward effect exists (docs/journal.md, "Secrets").
    const secretValues = extra.recorded ? [] : await resolveSecretInputs(spec, resolved.inputs, extra.secrets ?? options.secrets);
    const launch: Launch = { runId: ctx.ids.uuid(), spec, flowDigest: digest, resolved, startedAt: clock.now(), secretValues, ...extra };
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

  async function launchOf(record: RunRecord, runOptions: RunOptions): Promise<Launch> {
    const spec = await ctx.getSpec(record.flow_digest);
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
    const heartbeat = leases.startHeartbeat(launch.runId, controller);
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
        ctx.inflight.delete(launch.runId);
      });
    ctx.inflight.set(launch.runId, { controller, done: done.catch(() => undefined) });
    return done;
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
          tools: ctx.tools,
          executor: options.executor,
          secrets: launch.secrets ?? options.secrets,
          mask,
          clock,
          logger,
          cwd: ctx.cwd,
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
        // A live run stores its entries behind it (docs/journal.md, "Write-behind"); a replay checks each one as it goes.
        writeBehind: !launch.recorded,
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
    if (ctx.durable && last?.event !== 'run_finished' && (isFlowError(outcome.fatal, 'db_unreachable') || isConnectionError(outcome.fatal))) {
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

  const notifyRunId = (runOptions: RunOptions | undefined, runId: string): void => {
    try {
      runOptions?.onRunId?.(runId);
    } catch (err) {
      logger.warn(`[flowctl] [engine] onRunId listener threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  return { create, launchOf, execute, notifyRunId };
}

/** The run record change that goes with an executed run's entry (see EngineContext.recordWithEntries). */
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
