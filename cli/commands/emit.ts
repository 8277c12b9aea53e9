import { emitTs, emitYaml } from '../../src/flow/emit.js';
import { assertKnownFlags, flagString, UsageError, type ParsedArgs } from '../args.js';
import { EXIT, type CliIO } from '../io.js';
import { compileForCommand } from '../pack-tools.js';
import { printDiagnostics } from '../resolve-flow.js';

/**
 * `flowctl emit <flow> --to yaml|ts`: the compiled flow as canonical YAML (default) or a typed
 * TypeScript module, on stdout (a spec exception to "stdout only with --json"). Writes nothing.
 */
export default async function emit(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'emit', ['to']);
  const to = flagString(args, 'to') ?? 'yaml';
  if (to !== 'yaml' && to !== 'ts') throw new UsageError(`--to must be yaml or ts, got "${to}"`);
  if (args.positionals.length !== 1) throw new UsageError('emit takes one <flow> (a path, or a name in flows/)');
  const c = await compileForCommand(io, 'emit', args.positionals[0]!);
  if (typeof c === 'number') return c;
  if (!c.result.ok) {
    printDiagnostics(io, c.result.diagnostics);
    io.stderr.write(`flowctl emit: ${c.source.file} does not compile\n`);
    return EXIT.usage;
  }
  const { spec, flow_digest, flow } = c.result;
  io.stdout.write(to === 'ts' ? emitTs(spec, flow_digest) : emitYaml(spec, { toolRefs: flow.steps.map((s) => s.tool) }));
  return EXIT.ok;
}
