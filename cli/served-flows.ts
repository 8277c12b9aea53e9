import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlowError } from '../src/engine-entry.js';
import type { ResolvedFlow } from '../src/index.js';
import { resolveFlow } from '../src/engine/resolved-flow.js';
import type { CliIO } from './io.js';
import { specToolRefs, usesBrowserTools } from './project.js';
import { compileFlowArg, printDiagnostics } from './resolve-flow.js';

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
