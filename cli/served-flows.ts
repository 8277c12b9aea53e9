import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createEnvSecrets } from '../adapters/secrets-env/index.js';
import { FlowError, createEngine, type Engine, type EngineOptions, type Storage } from '../src/engine-entry.js';
import type { ResolvedFlow } from '../src/index.js';
import { resolveFlow } from '../src/engine/resolved-flow.js';
import { flowRunnerFromEngine } from '../src/packs/composite.js';
import type { CliIO } from './io.js';
import { flowUsesBrowser, type ProjectTools, projectTools, specToolRefs, usesBrowserTools } from './project.js';
import { compileFlowArg, printDiagnostics, registerCliTools } from './resolve-flow.js';

/**
 * The flows a launcher (`serve`, `mcp`) serves, resolved (their digests computed once, here: the
 * launcher and MCP server run by them), and where each came from (for the start-up listing).
 */
export interface ServedFlows {
  flows: ResolvedFlow[];
  origin: Map<string, string>;
}

/** Every flow file of the project: flows/*.yaml|yml, then recordings/*.json (the order bare names resolve in). */
export function projectFlowFiles(cwd: string): string[] {
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

/**
 * Compile the project's flows (or only `only`), after the tools they need are registered. A file
 * that does not compile is skipped with its diagnostics, unless it was named; a second flow with a
 * name already served is skipped too.
 */
export async function compileProjectFlows(io: CliIO, command: string, files: string[], only: string | undefined): Promise<ServedFlows> {
  const flows: ServedFlows['flows'] = [];
  const origin = new Map<string, string>();
  for (const file of files) {
    const c = await compileFlowArg(file, io);
    if (!c.result.ok) {
      printDiagnostics(io, c.result.diagnostics);
      if (only !== undefined) {
        throw new FlowError('compile_failed', `[flowctl] ${c.source.file} does not compile`, { data: { diagnostics: c.result.diagnostics } });
      }
      io.stderr.write(`flowctl ${command}: skipped ${c.source.file}: it does not compile\n`);
      continue;
    }
    const name = c.result.spec.name;
    if (origin.has(name)) {
      io.stderr.write(`flowctl ${command}: skipped ${c.source.file}: the name "${name}" is already served from ${origin.get(name)}\n`);
      continue;
    }
    origin.set(name, c.source.file);
    flows.push({ name, digest: c.result.flow_digest, spec: c.result.spec });
  }
  return { flows, origin };
}

/** The flows of the packs in a registry; the newest version of a pack wins a name, later packs are shadowed. */
export async function registryFlows(io: CliIO, dir: string, only: string | undefined): Promise<ServedFlows & { browser: boolean }> {
  const { loadRegistryFlows } = await import('../src/packs/index.js');
  const flows: ServedFlows['flows'] = [];
  const origin = new Map<string, string>();
  for (const f of await loadRegistryFlows(resolve(io.cwd, dir))) {
    if ((only !== undefined && f.name !== only) || origin.has(f.name)) continue;
    origin.set(f.name, `${f.pack}@${f.version}`);
    flows.push(resolveFlow(f.name, f.spec));
  }
  if (only !== undefined && flows.length === 0) {
    throw new FlowError('flow_not_found', `[flowctl] no pack in ${dir} has a flow named "${only}"`);
  }
  return { flows, origin, browser: flows.some((f) => usesBrowserTools(specToolRefs(f.spec))) };
}

/** An engine over the served flows, and what must be released when the launcher stops. */
export interface ServedEngine {
  engine: Engine;
  source: ServedFlows;
  /** The tools the engine runs with (built in, browser, packs). */
  tools: ProjectTools['registry'];
  /** Disposes the engine (and with it the storage), then the tools. */
  dispose(): Promise<void>;
}

export interface ServedEngineOptions {
  /** The launcher's name, for the skipped-file lines (`serve`, `mcp`). */
  command: string;
  /** The one flow to serve ([flow]), or every flow of the project (or of the registry). */
  only: string | undefined;
  /** --registry: serve the flows of that directory's packs instead of the project's files. */
  registry: string | undefined;
  /** Where runs go; opened once the flows to serve are known and disposed if nothing can be served. */
  openStorage(): Promise<Storage> | Storage;
  /** The launcher's own engine options (secret refs, dead-pid recovery). */
  engine?: Pick<EngineOptions, 'allowSecretRefs' | 'recoverDeadPids'>;
}

/**
 * The engine `serve` and `mcp` run on: the tools the served flows need (the browser only when a flow
 * uses it), the flows compiled against them, and an engine over the project's secrets. FlowError
 * `flow_not_found` when nothing compiles.
 */
export async function openServedEngine(io: CliIO, options: ServedEngineOptions): Promise<ServedEngine> {
  const { only, registry } = options;
  // Which tools to load is known before compiling: compiling needs them registered.
  const files = registry === undefined ? (only === undefined ? projectFlowFiles(io.cwd) : [only]) : [];
  const fromRegistry = registry === undefined ? undefined : await registryFlows(io, registry, only);
  let browser = fromRegistry?.browser ?? false;
  for (const file of files) browser ||= await flowUsesBrowser(file, io);
  let engine: Engine | undefined;
  let storage: Storage | undefined;
  let tools: { dispose(): Promise<void> } | undefined;
  try {
    storage = await options.openStorage();
    const project = await launcherTools(io, browser, registry, () => engine!);
    tools = project;
    const source = fromRegistry ?? (await compileProjectFlows(io, options.command, files, only));
    if (source.flows.length === 0) {
      throw new FlowError('flow_not_found', `[flowctl] nothing to serve: no flow compiles in ${registry ?? 'flows/ or recordings/'}`);
    }
    const created = createEngine({ storage, secrets: createEnvSecrets({ env: io.env }), tools: project.registry, cwd: io.cwd, ...options.engine });
    engine = created;
    return {
      engine: created,
      source,
      tools: project.registry,
      async dispose() {
        await created.dispose();
        await project.dispose();
      },
    };
  } catch (err) {
    await storage?.dispose?.();
    await tools?.dispose();
    throw err;
  }
}

/**
 * The tools a launcher's engine runs with (`serve`, `mcp`, `schedule`), registered for compiling: the
 * built-ins, the browser's when a flow needs them, the packs' of `registry` (or the installed ones).
 * A composite pack tool runs its flow as a run of its own on the same engine (stored, inspectable).
 */
export async function launcherTools(io: CliIO, browser: boolean, registry: string | undefined, engine: () => Engine): Promise<ProjectTools> {
  const project = await projectTools({ cwd: io.cwd, browser, registryDir: registry, runFlow: flowRunnerFromEngine(engine) });
  registerCliTools(project.extra);
  return project;
}
