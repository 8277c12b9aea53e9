import { deepFreeze, digestOf, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { RunRecord } from '../ports/storage.js';
import { summarizeEffects } from '../run/effects.js';
import { resolveInputs, type ResolvedInputs } from '../run/inputs.js';
import { JournalWriter } from '../run/journal-writer.js';
import { createLiveSource } from '../run/live-source.js';
import { createRecordedSource } from '../run/recorded-source.js';
import { checkReplayComplete, createVerifyCheck, planReplay } from '../run/replay.js';
import { rememberJournalTexts } from '../run/run-json.js';
import { parseRun } from '../run/run-schema.js';
import { executeRun, type RunOutcome } from '../run/runner.js';
import type { JournalEntry, Run, RunStartedEntry } from '../run/types.js';
import type { SecretStore } from '../ports/secrets.js';
import { SecretMask } from '../secrets/mask.js';
import { resolveSecretInputs } from '../secrets/preflight.js';
import { builtinTools } from '../tools/builtins/index.js';
import { createToolRegistry } from '../tools/registry.js';
import { createRunScope } from '../tools/run-scope.js';
import { cryptoIds, silentLogger, systemClock } from './defaults.js';
import { assertFlowSpec } from './spec-guard.js';
import { createStorageRuntime } from './storage-runtime.js';
import type { Engine, EngineOptions, ReplayMode, ReplaySource, RunOptions, RunTarget } from './types.js';

const DEFAULT_FRONT = 'rest';

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
  // Runs in flight (sync and async), so dispose can cancel and await them.
  const inflight = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  let disposed = false;

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
    const what = 'name' in target ? `flow "${target.name}" is not deployed on front "${target.front ?? DEFAULT_FRONT}"` : `no FlowSpec ${'digest' in target ? target.digest : ''} is stored`;
    throw new FlowError('not_found', `[flowctl] [engine] ${what}`);
  }

  /** Validate inputs (before anything exists), then create the run record: status pending. */
  async function create(
    target: RunTarget | { resolved: { digest: Digest; spec: FlowSpec } },
    inputs: Record<string, unknown> | undefined,
    extra: Pick<Partial<Launch>, 'replayOf' | 'recorded' | 'secrets'> = {},
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
    };
    await storage.runs.create(record);
    return launch;
  }

  function execute(launch: Launch, runOptions: RunOptions = {}): Promise<RunOutcome> {
    const controller = new AbortController();
    const signal = runOptions.signal ? AbortSignal.any([runOptions.signal, controller.signal]) : controller.signal;
    const done = executeLaunch(launch, runOptions, signal).finally(() => inflight.delete(launch.runId));
    inflight.set(launch.runId, { controller, done: done.catch(() => undefined) });
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
        onStarted: () => storage.runs.update(runId, { status: 'running' }),
      });
    } finally {
      launch.journal = writer.entries;
      launch.texts = writer.texts;
      await scope.dispose().catch((err: unknown) => logger.warn(`[flowctl] [engine] run ${runId}: disposing run resources failed: ${mask.maskError(err)}`));
    }
    if (launch.recorded?.verify && !outcome.fatal) outcome.fatal = checkReplayComplete(launch.recorded.journal, writer.entries.length);
    const last = writer.last;
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
    const level = outcome.status === 'succeeded' ? 'info' : 'warn';
    logger[level](`[flowctl] [engine] run ${runId} ${outcome.status}${outcome.error ? `: ${outcome.error.code}: ${outcome.error.message}` : ''}`);
    return outcome;
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
        if (!spec) throw new FlowError('not_found', '[flowctl] [replay] no FlowSpec given and the journal\'s flow is not stored; pass options.spec');
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
      const launch = await create(target, inputs, runOptions?.secrets ? { secrets: runOptions.secrets } : {});
      return finish(launch, await execute(launch, runOptions));
    },
    async start(target, inputs, runOptions) {
      alive();
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
    listRuns(query) {
      alive();
      return storage.runs.list(query);
    },
    replay,
    watch(runId, watchOptions) {
      alive();
      return storage.journal.watch(runId, watchOptions);
    },
    summarizeEffects(spec, inputs) {
      return summarizeEffects(spec, inputs);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      for (const { controller } of inflight.values()) controller.abort(new FlowError('canceled', '[flowctl] [engine] the engine is shutting down'));
      await Promise.all([...inflight.values()].map((r) => r.done));
      await options.executor?.dispose?.();
      await storage.dispose();
    },
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
