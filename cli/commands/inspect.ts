import { FlowError, prettyJson } from '../../src/engine-entry.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { getRunOrThrow, openProject, resolveRunId, type Project } from '../project.js';
import { formatStepDetail, formatTimeline, stepDetail, stepViews } from '../timeline.js';

/**
 * `flowctl inspect <run-id|last>`: the journal as a timeline (human text on stderr), or one step in
 * full with `--step <id>`; `--json` prints the Run (or the step record) on stdout. Read only from the
 * journal. An unknown run or step is exit 2.
 */
export default async function inspect(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'inspect', ['step', 'json']);
  const io = maskedIO(rawIO);
  const json = flagBool(args, 'json');
  const stepId = flagString(args, 'step');
  if (args.positionals.length !== 1) throw new UsageError('inspect takes one <run-id> (or "last")');

  let project: Project | undefined;
  try {
    project = await openProject(io, { packs: false });
    const engine = project.engine();
    const run = await getRunOrThrow(engine, await resolveRunId(engine, args.positionals[0]!));
    if (stepId === undefined) {
      if (json) io.stdout.write(`${prettyJson(run)}\n`);
      else io.stderr.write(formatTimeline(run));
      return EXIT.ok;
    }
    const view = stepDetail(run, stepId);
    if (!view) {
      const known = stepViews(run.journal).map((s) => s.step);
      throw new FlowError('step_not_found', `[flowctl] run ${run.id} has no step "${stepId}" in its journal (steps: ${known.join(', ') || 'none'})`, {
        data: { run_id: run.id, step: stepId, known },
      });
    }
    if (json) io.stdout.write(`${prettyJson(view)}\n`);
    else io.stderr.write(formatStepDetail(view));
    return EXIT.ok;
  } catch (err) {
    return reportError(io, err, { json, command: 'inspect' });
  } finally {
    await project?.close();
  }
}
