import { resolve } from 'node:path';
import { createEnvSecrets } from '../../adapters/secrets-env/index.js';
import { FlowError, createEngine, isFlowError, type Engine, type FlowSpec } from '../../src/engine-entry.js';
import type { CronSchedule } from '../../src/index.js';
import { summarizeEffects } from '../../src/run/effects.js';
import { resolveInputs } from '../../src/run/inputs.js';
import { parseCron } from '../../src/schedule/cron.js';
import { startScheduler } from '../../src/schedule/scheduler.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, reportError } from '../cli-output.js';
import { formatEffectSummary } from '../confirm.js';
import { readInputSources, typedInputs } from '../inputs.js';
import { EXIT, type CliIO } from '../io.js';
import { flowToolRefs, toolNeeds, openStore, specToolRefs, usesBrowserTools } from '../project.js';
import { compileFlowOrThrow } from '../resolve-flow.js';
import { launcherTools } from '../served-flows.js';

const FLAGS = ['cron', 'input', 'input-file', 'registry', 'yes'];

function cronOf(args: ParsedArgs): CronSchedule {
  const expr = flagString(args, 'cron');
  if (expr === undefined)
    throw new UsageError('--cron <expr> is required, e.g. --cron "*/5 * * * *" (5 fields) or --cron "*/10 * * * * *" (6, leading seconds)');
  try {
    return parseCron(expr);
  } catch (err) {
    if (isFlowError(err, 'invalid_cron')) throw new UsageError(err.message.replace('[flowctl] [schedule] ', ''));
    throw err;
  }
}

/** The first flow of a registry named `name` (the newest version of the first pack with it), or its first flow. */
async function registryFlow(io: CliIO, dir: string, name: string | undefined): Promise<{ spec: FlowSpec; origin: string }> {
  const { loadRegistryFlows } = await import('../../src/packs/index.js');
  const flows = await loadRegistryFlows(resolve(io.cwd, dir));
  const found = name === undefined ? flows[0] : flows.find((f) => f.name === name);
  if (!found) {
    throw new FlowError(
      'flow_not_found',
      name === undefined ? `[flowctl] the registry ${dir} has no flows` : `[flowctl] no pack in ${dir} has a flow named "${name}"`,
    );
  }
  return { spec: found.spec, origin: `${found.pack}@${found.version}` };
}

/**
 * `flowctl schedule <flow> --cron <expr>`: run a flow on a cron schedule with fixed inputs
 * (docs/schedule.md). Each fire logs its run id and status on stderr; a fire that comes while the
 * previous run is in flight is skipped. A schedule never prompts (nobody watches it): it prints the
 * outward effects of the flow once at start (--yes silences that notice). SIGINT/SIGTERM stop after the run in flight (exit 0);
 * a second signal cancels that run.
 */
export default async function schedule(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'schedule', FLAGS);
  const io = maskedIO(rawIO);
  const registry = flagString(args, 'registry');
  if (args.positionals.length > 1) throw new UsageError('schedule takes one <flow>');
  if (args.positionals.length === 0 && registry === undefined) throw new UsageError('schedule needs a <flow> (a path, or a name in flows/ or recordings/)');
  const flowArg = args.positionals[0];
  const cron = cronOf(args);
  const yes = flagBool(args, 'yes');

  let engine: Engine | undefined;
  let tools: { dispose(): Promise<void> } | undefined;
  try {
    const sources = await readInputSources(args, io.cwd);
    const fromRegistry = registry === undefined ? undefined : await registryFlow(io, registry, flowArg);
    const browser = fromRegistry ? usesBrowserTools(specToolRefs(fromRegistry.spec)) : toolNeeds(await flowToolRefs(flowArg!, io)).browser;
    const project = await launcherTools(io, browser, registry, () => engine!);
    tools = project;
    const spec = fromRegistry?.spec ?? (await compileFlowOrThrow(flowArg!, io)).spec;
    const origin = fromRegistry?.origin ?? flowArg!;
    // Typed by the flow's declared inputs, exactly as for `run` (docs/cli.md, `--input`).
    const inputs = typedInputs(sources, spec.inputs);
    // Checked once, before the first fire: a schedule must not fail on every fire for a typo.
    const resolved = resolveInputs(spec, inputs);
    const summary = summarizeEffects(spec, resolved.inputs);
    // Like serve and mcp, a schedule is a launcher the user started on purpose, and it runs unattended:
    // it never prompts. It states the outward effects every fire can have once, up front.
    if (summary.outward && !yes) {
      io.stderr.write(`flowctl schedule: every fire of ${spec.name} can have outward effects:\n${formatEffectSummary(summary).join('\n')}\n`);
    }

    engine = createEngine({ storage: openStore(io.cwd), secrets: createEnvSecrets({ env: io.env }), tools: project.registry, cwd: io.cwd });
    const digest = await engine.deploy(spec.name, spec, { front: 'schedule' });
    const runEngine = engine;
    const cancelRuns = new AbortController();
    const scheduler = startScheduler({
      schedule: cron,
      fire: async (at) => {
        io.stderr.write(`flowctl schedule: ${at} firing ${spec.name}\n`);
        const run = await runEngine.run({ digest }, inputs, { signal: cancelRuns.signal });
        const finished = run.journal.findLast((e) => e.event === 'run_finished');
        const error = finished?.event === 'run_finished' ? finished.error : undefined;
        const why = error ? `: ${error.step ? `step ${error.step}: ` : ''}${error.code}: ${error.message}` : '';
        io.stderr.write(`flowctl schedule: ${at} run ${run.id} ${run.status} (${spec.name})${why}\n`);
      },
      onSkip: (at) => io.stderr.write(`flowctl schedule: ${at} skipped: the previous run of ${spec.name} is still in flight\n`),
      onError: (err, at) =>
        io.stderr.write(`flowctl schedule: ${at} fire failed: ${isFlowError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.stack ?? err)}\n`),
    });

    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
      signals++;
      if (signals === 1) {
        io.stderr.write(`flowctl schedule: ${name}, stopping after the run in flight (again to cancel it)\n`);
        void scheduler.stop();
      } else {
        io.stderr.write(`flowctl schedule: ${name}, canceling the run in flight\n`);
        cancelRuns.abort(new FlowError('canceled', `[flowctl] [schedule] canceled by ${name}`));
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      io.stderr.write(
        `flowctl schedule: ${spec.name} ${digest} (${origin}) on "${cron.expression}" (local time); first fire ${scheduler.nextAt ?? '(none)'}; Ctrl-C stops\n`,
      );
      await scheduler.done;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    io.stderr.write(`flowctl schedule: stopped after ${scheduler.fires} fire time${scheduler.fires === 1 ? '' : 's'}\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(io, err, { command: 'schedule' });
  } finally {
    if (engine) await engine.dispose();
    await tools?.dispose();
  }
}
