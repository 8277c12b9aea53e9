import { FlowError } from '../errors.js';
import type { RunLease } from '../ports/storage.js';
import { summarizeEffects } from '../run/effects.js';
import { cancelRun, watchRun } from './cancel-watch.js';
import { createEngineContext, DEFAULT_FRONT } from './context.js';
import { createLauncher } from './launch.js';
import { createLeases } from './leases.js';
import { replayRun } from './replay.js';
import { finish, getRun } from './run-view.js';
import type { Engine, EngineOptions } from './types.js';

/**
 * The engine: deploys, runs, replays and journal watches over one Storage. See docs/journal.md.
 *
 * Defaults: memory storage, system clock, crypto uuid v4 ids, a silent logger, the built-in tools, in-process
 * execution, no secret store, `process.cwd()` for relative paths.
 *
 * The assembly of its parts: the shared context (context.ts), leases and recovery (leases.ts),
 * launching and executing runs (launch.ts), cancel and watch (cancel-watch.ts), replay (replay.ts)
 * and reading runs back (run-view.ts).
 */
export function createEngine(options?: EngineOptions): Engine {
  const ctx = createEngineContext(options);
  const { storage, inflight, logger } = ctx;
  const leases = createLeases(ctx);
  const launcher = createLauncher(ctx, leases);
  const { create, execute, notifyRunId } = launcher;
  const sweep = leases.startSweep();

  return {
    async deploy(name, spec, deployOptions = {}) {
      ctx.alive();
      if (typeof name !== 'string' || name.trim() === '') throw new FlowError('invalid_name', '[flowctl] [engine] a deploy needs a flow name');
      const digest = await ctx.putSpec(spec);
      await storage.deploys.set(deployOptions.front ?? DEFAULT_FRONT, name, digest);
      return digest;
    },
    putSpec: ctx.putSpec,
    resolve: ctx.resolve,
    async run(target, inputs, runOptions) {
      ctx.alive();
      ctx.checkRunPolicy(runOptions);
      const launch = await create(target, inputs, runOptions?.secrets ? { secrets: runOptions.secrets } : {});
      notifyRunId(runOptions, launch.runId);
      return finish(storage, launch, await execute(launch, runOptions));
    },
    async prepare(target, inputs, prepareOptions) {
      ctx.alive();
      const within = prepareOptions?.startWithinMs;
      if (within !== undefined && !(Number.isFinite(within) && within > 0))
        throw new FlowError('invalid_options', '[flowctl] [engine] startWithinMs must be a positive number of milliseconds');
      const deadline: RunLease | null =
        within === undefined ? null : { owner: ctx.owner, expires_at: new Date(Date.now() + within).toISOString(), prepared: true };
      const launch = await create(target, inputs, prepareOptions?.secrets ? { secrets: prepareOptions.secrets } : {}, deadline, prepareOptions?.store);
      return { run_id: launch.runId, status: 'pending' };
    },
    async abandon(runId, error) {
      ctx.alive();
      const record = await storage.runs.get(runId);
      if (record?.status !== 'pending' || inflight.has(runId)) return false;
      // An executor's lease (not a prepared run's start deadline): it started, leave it to its lease.
      if (record.lease && !record.lease.prepared) return false;
      if ((await storage.journal.read(runId, 0)).length > 0) return false;
      return leases.closeRun(record, 'failed', { code: error.code, message: error.message, retryable: false });
    },
    async execute(runId, runOptions = {}) {
      ctx.alive();
      ctx.checkRunPolicy(runOptions);
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
      const launch = await launcher.launchOf(record, runOptions);
      await storage.runs.update(runId, { lease: ctx.newLease() });
      notifyRunId(runOptions, runId);
      // A cancel that came before the run started: it starts and ends at once, canceled.
      const canceled = record.cancel_requested ? new FlowError('canceled', `[flowctl] [engine] run ${runId} was canceled`) : undefined;
      return finish(storage, launch, await execute(launch, runOptions, canceled));
    },
    cancel: (runId, cancelOptions) => cancelRun(ctx, leases, runId, cancelOptions),
    recover: leases.recover,
    async start(target, inputs, runOptions) {
      ctx.alive();
      ctx.checkRunPolicy(runOptions);
      const launch = await create(target, inputs, runOptions?.secrets ? { secrets: runOptions.secrets } : {});
      execute(launch, runOptions).catch((err: unknown) => {
        logger.error(`[flowctl] [engine] run ${launch.runId} could not be completed: ${err instanceof Error ? err.message : String(err)}`);
      });
      return { run_id: launch.runId, status: 'pending' };
    },
    getRun(id) {
      ctx.alive();
      return getRun(storage, id);
    },
    async getArtifact(digest) {
      ctx.alive();
      return storage.artifacts?.get(digest);
    },
    listRuns(query) {
      ctx.alive();
      return storage.runs.list(query);
    },
    replay: (source, replayOptions) => replayRun(ctx, launcher, source, replayOptions),
    watch(runId, watchOptions) {
      ctx.alive();
      return watchRun(ctx, leases, runId, watchOptions);
    },
    summarizeEffects(spec, inputs) {
      return summarizeEffects(spec, inputs);
    },
    async dispose() {
      if (ctx.disposed) return;
      ctx.markDisposed();
      await sweep.stop();
      for (const { controller } of inflight.values()) controller.abort(new FlowError('canceled', '[flowctl] [engine] the engine is shutting down'));
      await Promise.all([...inflight.values()].map((r) => r.done));
      await ctx.options.executor?.dispose?.();
      await storage.dispose();
    },
  };
}
