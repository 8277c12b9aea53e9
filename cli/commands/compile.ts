import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prettyJson, serializeLock } from '../../src/engine-entry.js';
import { LOCK_FILE_NAME } from '../../src/tools/lock.js';
import { assertKnownFlags, flagBool, UsageError, type ParsedArgs } from '../args.js';
import { EXIT, type CliIO } from '../io.js';
import { compileForCommand } from '../pack-tools.js';
import { printDiagnostics } from '../resolve-flow.js';

/**
 * `flowctl compile <flow>`: writes `out/<name>.flowspec.json` (the FlowSpec, pretty JSON with sorted
 * keys) and adds newly resolved tool versions to `flowctl.lock` (created when missing).
 * `--check` writes nothing; `--json` prints the FlowSpec, or `{diagnostics}` on failure, to stdout.
 * Exit 0, or 2 on a compile failure.
 */
export default async function compile(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'compile', ['check', 'json']);
  const check = flagBool(args, 'check');
  const json = flagBool(args, 'json');
  if (args.positionals.length !== 1) throw new UsageError('compile takes one <flow> (a path, or a name in flows/)');
  const c = await compileForCommand(io, 'compile', args.positionals[0]!, json);
  if (typeof c === 'number') return c;
  const { result, source } = c;
  if (!result.ok) {
    printDiagnostics(io, result.diagnostics);
    io.stderr.write(`flowctl compile: ${source.file} does not compile (${result.diagnostics.length} problem${result.diagnostics.length === 1 ? '' : 's'})\n`);
    if (json) io.stdout.write(`${prettyJson({ diagnostics: result.diagnostics })}\n`);
    return EXIT.usage;
  }
  if (check) {
    io.stderr.write(`flowctl compile: ${source.file} ok (--check: nothing written)\n${result.flow_digest}\n`);
  } else {
    const outDir = join(io.cwd, 'out');
    await mkdir(outDir, { recursive: true });
    const outFile = `out/${result.spec.name}.flowspec.json`;
    await writeFile(join(io.cwd, outFile), `${prettyJson(result.spec)}\n`);
    const lockPath = join(io.cwd, LOCK_FILE_NAME);
    if (result.newPins.length > 0 || !existsSync(lockPath)) {
      await writeFile(lockPath, serializeLock(result.lock));
      for (const p of result.newPins) io.stderr.write(`  pinned ${p.ref}@${p.version} ${p.contract_digest}\n`);
    }
    io.stderr.write(`flowctl compile: ${source.file} -> ${outFile}\n${result.flow_digest}\n`);
  }
  if (json) io.stdout.write(`${prettyJson(result.spec)}\n`);
  return EXIT.ok;
}
