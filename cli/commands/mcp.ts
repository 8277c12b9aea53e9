import { serveMcpStdio } from '../../adapters/mcp-stdio/index.js';
import { serverInstructions } from '../../src/mcp/presentation.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { assertKnownFlags, flagString, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { openStore, STORE_DIR } from '../project.js';
import { openServedEngine, type ServedEngine } from '../served-flows.js';

const FLAGS = ['registry'];

/**
 * `flowctl mcp [flow]`: an MCP server over stdio (docs/mcp.md). Every flow of flows/ and
 * recordings/ (or only [flow], or the flows of --registry's packs) is one tool. stdout carries only
 * protocol messages; everything human goes to stderr. Calls never prompt (there is no terminal on
 * stdio): the client decided to call, and the tool annotations mark the outward flows. Runs go to
 * `.flowctl/`, so `flowctl inspect` and `replay` work on them. Ends (exit 0) when the client closes
 * stdin, or on SIGINT/SIGTERM (runs in flight are canceled and their journals closed).
 */
export default async function mcp(args: ParsedArgs, rawIO: CliIO): Promise<number> {
  assertKnownFlags(args, 'mcp', FLAGS);
  if (args.positionals.length > 1) throw new UsageError('mcp takes at most one [flow]');
  const io = maskedIO(rawIO);
  const only = args.positionals[0];
  const registry = flagString(args, 'registry');

  let served: ServedEngine | undefined;
  const release: (() => void)[] = [];
  try {
    served = await openServedEngine(io, { command: 'mcp', only, registry, openStorage: () => openStore(io.cwd) });
    const { engine, source, tools } = served;
    // The CLI's own bookkeeping: the project's store records what `mcp` served under each name
    // (front mcp), once at start. The MCP server itself runs by digest and writes no deploy.
    for (const f of source.flows) await engine.deploy(f.name, f.spec, { front: 'mcp' });
    const server = createMcpServer({
      engine,
      flows: source.flows,
      tools,
      onLog: (_level, message) => io.stderr.write(`${message}\n`),
      instructions: serverInstructions({
        what: 'one flow of this flowctl project (flows/, recordings/ or a registry pack)',
        runs: "The run is stored in the project's .flowctl/ folder: `flowctl inspect <run_id>` shows its steps, `flowctl replay <run_id>` replays it, `flowctl runs` lists them.",
      }),
    });
    const session = await serveMcpStdio(server, { stdin: io.stdin, stdout: io.stdout });
    const onSignal = (name: NodeJS.Signals) => {
      io.stderr.write(`flowctl mcp: ${name}, stopping\n`);
      void session.close();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    release.push(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    const lines = [`flowctl mcp: serving ${source.flows.length} tool${source.flows.length === 1 ? '' : 's'} over stdio`];
    for (const f of source.flows) lines.push(`  ${f.name}  (${source.origin.get(f.name)})`);
    lines.push(`runs are stored in ${STORE_DIR}/; calls never prompt; close stdin or send SIGTERM to stop`);
    io.stderr.write(`${lines.join('\n')}\n`);
    await session.closed;
    return EXIT.ok;
  } catch (err) {
    return reportError(io, err, { command: 'mcp' });
  } finally {
    for (const r of release) r();
    await served?.dispose();
  }
}
