import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { serveMcpStdio } from '../../../adapters/mcp-stdio/index.js';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import { FlowError } from '../../../src/errors.js';
import { flowRunnerFromEngine } from '../../../src/packs/composite.js';
import { createMcpServer, type McpFlow } from '../../../src/mcp/server.js';
import { assertKnownFlags, flagString, UsageError, type ParsedArgs } from '../args.js';
import { maskedIO, reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { flowToolRefs, toolNeeds, openStore, projectTools, specToolRefs, STORE_DIR, usesBrowserTools } from '../project.js';
import { compileFlowArg, printDiagnostics, registerCliTools } from '../resolve-flow.js';

const FLAGS = ['registry'];

/** Every flow file of the project: flows/*.yaml|yml, then recordings/*.json (the order bare names resolve in). */
function projectFlowFiles(cwd: string): string[] {
  const list = (dir: string, exts: string[]) => {
    try {
      return readdirSync(join(cwd, dir))
        .filter((f) => exts.some((e) => f.endsWith(e)))
        .sort()
        .map((f) => `${dir}/${f}`);
    } catch {
      return [];
    }
  };
  return [...list('flows', ['.yaml', '.yml']), ...list('recordings', ['.json'])];
}

interface Sourced {
  flows: McpFlow[];
  origin: Map<string, string>;
}

/** Compile the project's flows (or only `only`). A file that does not compile is skipped with its diagnostics, unless it was named. */
async function compileProjectFlows(io: CliIO, files: string[], only: string | undefined): Promise<Sourced> {
  const flows: McpFlow[] = [];
  const origin = new Map<string, string>();
  for (const file of files) {
    const c = await compileFlowArg(file, io);
    if (!c.result.ok) {
      printDiagnostics(io, c.result.diagnostics);
      if (only !== undefined) throw new FlowError('compile_failed', `[flowctl] ${c.source.file} does not compile`, { data: { diagnostics: c.result.diagnostics } });
      io.stderr.write(`flowctl mcp: skipped ${c.source.file}: it does not compile\n`);
      continue;
    }
    const name = c.result.spec.name;
    if (origin.has(name)) {
      io.stderr.write(`flowctl mcp: skipped ${c.source.file}: the tool "${name}" is already served from ${origin.get(name)}\n`);
      continue;
    }
    origin.set(name, c.source.file);
    flows.push({ name, spec: c.result.spec });
  }
  return { flows, origin };
}

/** The flows of a registry's packs; the newest version of the first pack with a name wins it. */
async function registryFlows(io: CliIO, dir: string, only: string | undefined): Promise<Sourced> {
  const { loadRegistryFlows } = await import('../../../src/packs/index.js');
  const flows: McpFlow[] = [];
  const origin = new Map<string, string>();
  for (const f of await loadRegistryFlows(resolve(io.cwd, dir))) {
    if ((only !== undefined && f.name !== only) || origin.has(f.name)) continue;
    origin.set(f.name, `${f.pack}@${f.version}`);
    flows.push({ name: f.name, spec: f.spec });
  }
  if (only !== undefined && flows.length === 0) throw new FlowError('flow_not_found', `[flowctl] no pack in ${dir} has a flow named "${only}"`);
  return { flows, origin };
}

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

  let engine: Engine | undefined;
  let tools: { dispose(): Promise<void> } | undefined;
  const release: (() => void)[] = [];
  try {
    const files = registry === undefined ? (only === undefined ? projectFlowFiles(io.cwd) : [only]) : [];
    const fromRegistry = registry === undefined ? undefined : await registryFlows(io, registry, only);
    // Which tools to load is known before compiling: compiling needs them registered.
    let browser = fromRegistry?.flows.some((f) => usesBrowserTools(specToolRefs(f.spec))) ?? false;
    for (const file of files) browser ||= toolNeeds(await flowToolRefs(file, io)).browser;
    const project = await projectTools({
      cwd: io.cwd,
      browser,
      registryDir: registry,
      // A composite pack tool runs its flow as a run of its own on the same engine (stored, inspectable).
      runFlow: flowRunnerFromEngine(() => engine!),
    });
    tools = project;
    registerCliTools(project.extra);
    const source = fromRegistry ?? (await compileProjectFlows(io, files, only));
    if (source.flows.length === 0) {
      throw new FlowError('flow_not_found', `[flowctl] nothing to serve: no flow compiles in ${registry ?? 'flows/ or recordings/'}`);
    }
    engine = createEngine({ storage: openStore(io.cwd), secrets: createEnvSecrets({ env: io.env }), tools: project.registry, cwd: io.cwd });
    const server = createMcpServer({
      engine,
      flows: source.flows,
      tools: project.registry,
      onLog: (_level, message) => io.stderr.write(`${message}\n`),
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
    if (engine) await engine.dispose();
    await tools?.dispose();
  }
}
