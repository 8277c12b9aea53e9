import { stat, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { FlowError, isFlowError, prettyJson, readJournalFixture, type FlowSpec, type ReplayMode, type ReplaySource } from '../../src/engine-entry.js';
import { assertKnownFlags, flagBool, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, printOutputValue, reportError } from '../cli-output.js';
import { createConfirmGate } from '../confirm.js';
import { EXIT, type CliIO } from '../io.js';
import { createProgressPrinter } from '../progress.js';
import { cancelOnSignals, getRunOrThrow, openProject, openSandbox, resolveRunId, specToolRefs, toolNeeds, type Project } from '../project.js';
import { finishLine } from './run.js';

const FLAGS = ['verify', 'rerun', 'yes', 'json'];

interface LoadedSource {
  source: ReplaySource;
  spec: FlowSpec;
  /** For messages: the run id or the fixture path. */
  label: string;
}

/**
 * `flowctl replay <run-id|journal-file>`: hermetic by default, `--verify`, or `--rerun` (live, asks
 * like `run` unless `--yes`). A divergence prints the structured report and exits 1.
 */
export default async function replay(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'replay', FLAGS);
  const io = maskedIO(rawIO);
  const json = flagBool(args, 'json');
  const verify = flagBool(args, 'verify');
  const rerun = flagBool(args, 'rerun');
  const yes = flagBool(args, 'yes');
  if (verify && rerun) throw new UsageError('--verify and --rerun are mutually exclusive: --verify checks a hermetic replay, --rerun runs the tools live');
  if (args.positionals.length !== 1) throw new UsageError('replay takes one <run-id> (or "last") or a journal fixture file');
  const mode: ReplayMode = verify ? 'verify' : rerun ? 'rerun' : 'hermetic';

  let project: Project | undefined;
  try {
    const loaded = await loadSource(io, args.positionals[0]!);
    // Hermetic and verify replays run no tool: no browser, no sandbox, no network.
    const live = mode === 'rerun';
    const needs = toolNeeds(specToolRefs(loaded.spec));
    project = await openProject(io, {
      browser: live && needs.browser,
      packs: live && needs.packs,
      executor: live ? await openSandbox(undefined, io.env) : undefined,
    });
    const progress = createProgressPrinter(io, loaded.spec);
    const gate = createConfirmGate(io, { yes, action: `replay --rerun of ${loaded.label}`, beforePrompt: () => progress.clear() });
    const cancel = cancelOnSignals(io);
    let result;
    try {
      result = await project.engine().replay(loaded.source, {
        mode,
        spec: loaded.spec,
        confirm: live ? gate.confirm : undefined,
        onEntry: (e) => progress.onEntry(e),
        signal: cancel.signal,
      });
    } finally {
      cancel.release();
      progress.clear();
    }
    if (json) io.stdout.write(`${prettyJson(result)}\n`);
    else if (result.status === 'succeeded') printOutputValue(io, result.output);
    if (mode === 'verify') {
      io.stderr.write(`flowctl: replay ${result.id} verified ${loaded.label}: every entry matches the recorded journal (replayed status ${result.status})\n`);
      return EXIT.ok;
    }
    return finishLine(io, result, loaded.spec.name, gate.refusal !== undefined);
  } catch (err) {
    return reportError(io, err, { json, command: 'replay', details: divergenceLines(err) });
  } finally {
    await project?.close();
  }
}

/** A fixture file when the argument names an existing file; otherwise a stored run id (or `last`). */
async function loadSource(io: CliIO, arg: string): Promise<LoadedSource> {
  const path = resolve(io.cwd, arg);
  const isFile =
    arg !== 'last' &&
    (await stat(path).then(
      (s) => s.isFile(),
      () => false,
    ));
  if (isFile) {
    const text = await readFile(path, 'utf8').catch((cause: NodeJS.ErrnoException) => {
      throw new FlowError('fixture_unreadable', `[flowctl] cannot read journal fixture ${arg}: ${cause.code ?? cause.message}`, { cause });
    });
    const fixture = readJournalFixture(text);
    return { source: { journal: fixture.run.journal, run_id: fixture.run.id }, spec: fixture.spec, label: arg };
  }
  // A probe session just to read the store; the replay opens its own with the tools it needs.
  const probe = await openProject(io, { packs: false });
  try {
    const engine = probe.engine();
    const id = await resolveRunId(engine, arg);
    const run = await getRunOrThrow(engine, id);
    const found = await engine.resolve({ digest: run.flow_digest });
    if (!found) throw new UsageError(`the FlowSpec ${run.flow_digest} of run ${id} is not stored in .flowctl/`);
    return { source: { run_id: id }, spec: found.spec, label: `run ${id}` };
  } finally {
    await probe.close();
  }
}

/** The structured report of a divergence or a broken journal: seq, step, field, expected, actual. */
export function divergenceLines(err: unknown): string[] {
  if (!isFlowError(err)) return [];
  const d = err.data as { seq?: unknown; step?: unknown; field?: unknown; expected?: unknown; actual?: unknown } | undefined;
  if (!d || typeof d !== 'object' || !('seq' in d) || !('field' in d)) return [];
  const show = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'));
  return [
    `  code:     ${err.code}`,
    `  seq:      ${show(d.seq)}`,
    `  step:     ${show(d.step)}`,
    `  field:    ${show(d.field)}`,
    `  expected: ${show(d.expected)}`,
    `  actual:   ${show(d.actual)}`,
  ];
}
