import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createEnvSecrets } from '../../adapters/secrets-env/index.js';
import { prettyJson, writeJournalFixture, type Executor, type FlowSpec, type Run, type SecretStore } from '../../src/engine-entry.js';
import { summarizeEffects } from '../../src/run/effects.js';
import { resolveInputs } from '../../src/run/inputs.js';
import { resolveSecretInputs } from '../../src/secrets/preflight.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, printOutputValue, reportError } from '../cli-output.js';
import { createConfirmGate, formatEffectSummary } from '../confirm.js';
import { readInputSources, typedInputs } from '../inputs.js';
import { EXIT, type CliIO } from '../io.js';
import { createProgressPrinter } from '../progress.js';
import { cancelOnSignals, openProject, openSandbox, toolNeeds, type Project } from '../project.js';
import { resolveRunSpec } from '../run-spec.js';
import { warmValidators } from '../warm-validators.js';

const FLAGS = ['input', 'input-file', 'dry', 'yes', 'record-journal', 'sandbox', 'json'];

/**
 * `flowctl run <flow>`: compile and run locally against `.flowctl/`. See docs/cli.md for every flag.
 * Exit 0 succeeded, 1 failed (after the Run, fixture and output are written), 2 bad input or compile
 * failure (no run), 3 an outward effect was not confirmed.
 */
export default async function run(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'run', FLAGS);
  const io = maskedIO(rawIO);
  const json = flagBool(args, 'json');
  const dry = flagBool(args, 'dry');
  const yes = flagBool(args, 'yes');
  const recordPath = flagString(args, 'record-journal');
  const sandbox = flagString(args, 'sandbox');
  if (args.positionals.length !== 1) throw new UsageError('run takes one <flow> (a path, or a name in flows/ or recordings/)');
  const flowArg = args.positionals[0]!;

  let project: Project | undefined;
  let executor: Executor | undefined;
  try {
    // Files and pairs are read first (a bad one fails before anything opens); their values are
    // typed once the flow's declared inputs are known (docs/cli.md, `--input`).
    const sources = await readInputSources(args, io.cwd);
    // Opened before anything runs (also with --dry), so an unknown provider fails fast (exit 2).
    // Creating a provider starts nothing: its worker processes start with the first step it takes.
    executor = await openSandbox(sandbox, io.env);
    // The spec comes from the compiled-spec cache when it can (docs/cli.md); the tools its steps need
    // are loaded first, and a browser flow about to run starts Chromium while the rest gets ready.
    const resolved = await resolveRunSpec(flowArg, io, {
      write: !dry,
      openTools: async (refs, cached) => {
        const needs = toolNeeds(refs);
        // With a cached spec the run's inputs and secrets can be checked before the project opens,
        // so Chromium starts while the browser tools are defined.
        const warmBrowser =
          needs.browser && !dry && cached !== undefined && (await runCanStart(cached, typedInputs(sources, cached.inputs), createEnvSecrets({ env: io.env })));
        project = await openProject(io, { ...needs, executor, warmBrowser });
        return project;
      },
    });
    const { spec, flow_digest } = resolved;
    const inputs = typedInputs(sources, spec.inputs);
    if (dry) return printPlan(io, spec, flow_digest, inputs, json);
    // Inputs and secrets are checked here as the engine checks them first thing, so that a run that
    // cannot start opens no browser; then Chromium starts (if it did not yet) while the engine gets
    // the run ready.
    await runCanStart(spec, inputs, resolved.opened.secrets);
    resolved.opened.warmBrowser();
    warmValidators(spec, resolved.opened.tools);

    const progress = createProgressPrinter(io, spec);
    const gate = createConfirmGate(io, { yes, action: `run ${spec.name}`, beforePrompt: () => progress.clear() });
    const cancel = cancelOnSignals(io);
    let result;
    try {
      result = await resolved.opened.engine().run({ spec }, inputs, { confirm: gate.confirm, onEntry: (e) => progress.onEntry(e), signal: cancel.signal });
    } finally {
      cancel.release();
      progress.clear();
    }
    const fixtureWritten = recordPath ? await writeFixture(io, recordPath, result, spec) : true;
    if (json) io.stdout.write(`${prettyJson(result)}\n`);
    else if (result.status === 'succeeded') printOutputValue(io, result.output);
    const code = finishLine(io, result, spec.name, gate.refusal !== undefined);
    return fixtureWritten ? code : Math.max(code, EXIT.failed);
  } catch (err) {
    return reportError(io, err, { json, command: 'run' });
  } finally {
    // The project disposes the sandbox; a flow that never got as far as opening one leaves it to us.
    if (project) await project.close();
    else await executor?.dispose?.();
  }
}

/**
 * What the engine checks first when a run starts (the inputs contract, every secret input resolves):
 * throws its FlowError (`invalid_inputs`, `secret_not_found`) when the run cannot start.
 */
async function runCanStart(spec: FlowSpec, inputs: Record<string, unknown>, secrets: SecretStore): Promise<true> {
  await resolveSecretInputs(spec, resolveInputs(spec, inputs).inputs, secrets);
  return true;
}

/** `--dry`: inputs checked against the contract, then the steps and outward effects; nothing runs, nothing is written. */
function printPlan(io: CliIO, spec: FlowSpec, flowDigest: string, given: Record<string, unknown>, json: boolean): number {
  const { inputs } = resolveInputs(spec, given);
  const effects = summarizeEffects(spec, inputs);
  if (json) {
    const steps = spec.steps.map((s) => ({
      id: s.id,
      tool: `${s.tool.ref}@${s.tool.version}`,
      contract_digest: s.tool.contract_digest,
      capabilities: s.capabilities,
      args: s.args,
      ...(s.if !== undefined ? { if: s.if } : {}),
    }));
    io.stdout.write(`${prettyJson({ flow: spec.name, flow_digest: flowDigest, inputs, steps, effects })}\n`);
    return EXIT.ok;
  }
  const lines = [`plan for ${spec.name} ${flowDigest} (--dry: nothing runs)`, `inputs: ${prettyJson(inputs).replace(/\n\s*/g, ' ')}`, 'steps:'];
  spec.steps.forEach((s, i) => {
    const caps = s.capabilities.length ? ` [${s.capabilities.join(', ')}]` : ' [pure]';
    lines.push(`  ${i + 1}. ${s.id}: ${s.tool.ref}@${s.tool.version}${caps}${s.if !== undefined ? ` if ${s.if}` : ''}`);
    lines.push(`     args: ${JSON.stringify(s.args)}`);
  });
  lines.push(...formatEffectSummary(effects));
  io.stderr.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}

/** `--record-journal`: false (and the reason on stderr) when the file cannot be written; the run's result is still printed. */
async function writeFixture(io: CliIO, path: string, result: Run, spec: FlowSpec): Promise<boolean> {
  const full = resolve(io.cwd, path);
  try {
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, writeJournalFixture(result, spec));
  } catch (err) {
    io.stderr.write(`flowctl run: cannot write --record-journal ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return false;
  }
  io.stderr.write(`flowctl: journal fixture written to ${path}\n`);
  return true;
}

/** The closing stderr line and the exit code of a finished (or refused) run. */
export function finishLine(io: CliIO, result: Run, flowName: string, refused: boolean): number {
  const finished = result.journal.findLast((e) => e.event === 'run_finished');
  const error = finished?.event === 'run_finished' ? finished.error : undefined;
  if (refused && result.status === 'canceled') {
    io.stderr.write(`flowctl: run ${result.id} canceled before its first outward step (${flowName})\n`);
    return EXIT.refused;
  }
  const why = error ? `: ${error.step ? `step ${error.step}: ` : ''}${error.code}: ${error.message}` : '';
  io.stderr.write(`flowctl: run ${result.id} ${result.status} (${flowName})${why}\n`);
  return result.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}
