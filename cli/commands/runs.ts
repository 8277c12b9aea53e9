import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { prettyJson } from '../../src/engine-entry.js';
import { assertKnownFlags, flagBool, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { openProject, STORE_DIR, type Project } from '../project.js';

/**
 * `flowctl runs [last]`: stored run ids newest first, one per line on stderr with status, flow name
 * and start time. `runs last` prints only the newest id on stdout (exit 1 when there is none).
 * `--json`: one array of the run records (pretty, keys sorted) on stdout, `[]` when there are none.
 * Statuses are the journal's (the store repairs a header that missed its last update), so they agree
 * with `inspect`.
 */
export default async function runs(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'runs', ['json']);
  const io = maskedIO(rawIO);
  const json = flagBool(args, 'json');
  const [which, ...extra] = args.positionals;
  if (extra.length > 0 || (which !== undefined && which !== 'last')) {
    throw new UsageError(`runs takes nothing or "last" (got "${args.positionals.join(' ')}")`);
  }
  // Listing must not create the store in a folder that has none.
  const hasStore = existsSync(join(io.cwd, STORE_DIR, 'runs'));
  let project: Project | undefined;
  try {
    project = hasStore ? await openProject(io, { packs: false }) : undefined;
    if (which === 'last') {
      const [newest] = project ? await project.engine().listRuns({ limit: 1 }) : [];
      if (json) io.stdout.write(`${prettyJson(newest ? [newest] : [])}\n`);
      if (!newest) {
        io.stderr.write('flowctl runs: no runs in .flowctl/ yet\n');
        return EXIT.failed;
      }
      if (!json) io.stdout.write(`${newest.id}\n`);
      return EXIT.ok;
    }
    const list = project ? await project.engine().listRuns() : [];
    if (json) {
      io.stdout.write(`${prettyJson(list)}\n`);
      return EXIT.ok;
    }
    if (list.length === 0) io.stderr.write('flowctl runs: no runs in .flowctl/ yet\n');
    for (const r of list) {
      const replay = r.replay_of ? `  (replay of ${r.replay_of})` : '';
      io.stderr.write(`${r.id}  ${r.status.padEnd(9)}  ${r.flow_name}  ${r.started_at}${replay}\n`);
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(io, err, { json, command: 'runs' });
  } finally {
    await project?.close();
  }
}
