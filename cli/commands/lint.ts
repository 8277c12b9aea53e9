import { writeFile } from 'node:fs/promises';
import { formatDiagnostic, NO_SOURCE } from '../../src/flow/diagnostics.js';
import { emitYaml } from '../../src/flow/emit.js';
import { lintCompiled } from '../../src/flow/lint.js';
import { assertKnownFlags, flagBool, UsageError, type ParsedArgs } from '../args.js';
import { EXIT, type CliIO } from '../io.js';
import { compileForCommand } from '../pack-tools.js';
import { printDiagnostics } from '../resolve-flow.js';

/**
 * `flowctl lint <flow>`: compile diagnostics, then style findings (`non-canonical`, `no-output`, and
 * any registered rule). Exit 2 on a compile failure; findings alone exit 0. `--fix` rewrites a YAML
 * flow to its canonical form (what `flowctl emit` prints), which clears `non-canonical`.
 */
export default async function lint(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'lint', ['fix']);
  const fix = flagBool(args, 'fix');
  if (args.positionals.length !== 1) throw new UsageError('lint takes one <flow> (a path, or a name in flows/)');
  const c = await compileForCommand(io, 'lint', args.positionals[0]!);
  if (typeof c === 'number') return c;
  const { result, source } = c;
  if (!result.ok) {
    printDiagnostics(io, result.diagnostics);
    io.stderr.write(`flowctl lint: ${source.file} does not compile\n`);
    return EXIT.usage;
  }
  const canonical = source.kind === 'yaml' ? emitYaml(result.spec, { toolRefs: result.flow.steps.map((s) => s.tool) }) : undefined;
  let text = source.text;
  if (fix) {
    if (canonical === undefined) {
      io.stderr.write(`flowctl lint: --fix rewrites YAML flows only; ${source.file} is a ${source.kind}\n`);
    } else if (text !== canonical) {
      await writeFile(source.path, canonical);
      text = canonical;
      io.stderr.write(`flowctl lint: rewrote ${source.file} in canonical form\n`);
    }
  }
  const findings = lintCompiled({
    spec: result.spec,
    flow: result.flow,
    file: source.file,
    source: { text, kind: source.kind },
    canonical,
    locate: c.locate ?? NO_SOURCE,
  });
  for (const f of findings) io.stderr.write(`${formatDiagnostic(f)}\n`);
  io.stderr.write(`flowctl lint: ${source.file}: ${findings.length === 0 ? 'no findings' : `${findings.length} finding${findings.length === 1 ? '' : 's'}`}\n`);
  return EXIT.ok;
}
