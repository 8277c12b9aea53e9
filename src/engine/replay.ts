import type { Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import { planReplay } from '../run/replay.js';
import type { Run } from '../run/types.js';
import type { EngineContext } from './context.js';
import type { Launcher } from './launch.js';
import { finish } from './run-view.js';
import { assertFlowSpec } from './spec-guard.js';
import type { ReplayMode, ReplaySource, RunOptions } from './types.js';

/**
 * Replay a run (docs/journal.md): hermetic and verify answer from its journal, rerun runs its tools
 * again; each is a new run whose run_started names the original.
 */
export async function replayRun(
  ctx: EngineContext,
  launcher: Launcher,
  source: ReplaySource,
  replayOptions: { mode?: ReplayMode; spec?: FlowSpec } & RunOptions = {},
): Promise<Run> {
  const { storage } = ctx;
  ctx.alive();
  ctx.checkRunPolicy(replayOptions);
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
    spec ??= await ctx.getSpec(record.flow_digest);
    if (!spec) throw new FlowError('not_found', `[flowctl] [replay] the FlowSpec ${record.flow_digest} of run ${record.id} is not stored`);
  } else {
    journal = source.journal;
    originalId = source.run_id;
    if (!spec) {
      const first = Array.isArray(journal) ? (journal[0] as { flow_digest?: Digest } | undefined) : undefined;
      spec = first?.flow_digest ? await ctx.getSpec(first.flow_digest) : undefined;
      if (!spec) throw new FlowError('not_found', "[flowctl] [replay] no FlowSpec given and the journal's flow is not stored; pass options.spec");
    }
  }
  assertFlowSpec(spec);
  const plan = planReplay(spec, journal, mode);
  const replayOf = { run_id: originalId ?? plan.started.digest, mode };
  await storage.specs.put(plan.flow_digest, spec);
  const launch = await launcher.create({ resolved: { digest: plan.flow_digest, spec } }, plan.started.inputs, {
    replayOf,
    ...(mode === 'rerun' ? {} : { recorded: { journal: plan.journal, verify: mode === 'verify' } }),
  });
  const runOptions: RunOptions = { ...replayOptions, ...(mode === 'rerun' ? {} : { confirm: undefined }) };
  return finish(storage, launch, await launcher.execute(launch, runOptions));
}
