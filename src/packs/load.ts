import { stat } from 'node:fs/promises';
import { digestOf, type Digest } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { Tool, ToolRegistry } from '../tools/types.js';
import { compositeTool, type FlowRunner } from './composite.js';
import { readPack, type BlobCache } from './read-pack.js';
import { openRegistry } from './registry-dir.js';
import { packId, type LoadedPack } from './types.js';

/** A flow of an installed pack, as `serve`, `mcp` and `schedule --registry` get it. */
export interface RegistryFlow {
  /** The pack's name, version and digest. */
  pack: string;
  version: string;
  pack_digest: Digest;
  /** The flow's name (its FlowSpec name). */
  name: string;
  flow_digest: Digest;
  spec: FlowSpec;
}

export interface LoadRegistryOptions {
  /** When true, a missing registry directory yields an empty list instead of `registry_not_found`. Default false. */
  optional?: boolean;
}

/** `1.10.0` > `1.9.0`; a prerelease sorts before its release. */
export function comparePackVersions(a: string, b: string): number {
  const [ca = '', pa] = a.split(/-(.*)/s);
  const [cb = '', pb] = b.split(/-(.*)/s);
  const na = ca.split('.').map(Number);
  const nb = cb.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (na[i] !== nb[i]) return (na[i] ?? 0) - (nb[i] ?? 0);
  if (pa === pb) return 0;
  if (pa === undefined) return 1;
  if (pb === undefined) return -1;
  return pa < pb ? -1 : 1;
}

/**
 * Every pack of a registry, verified; any pack that fails verification is FlowError
 * `registry_corrupt` naming each (a launcher must not serve content it cannot vouch for).
 * Sorted by name, then newest version first.
 */
export async function loadRegistryPacks(dir: string, options: LoadRegistryOptions = {}): Promise<LoadedPack[]> {
  if (
    options.optional &&
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return [];
  const registry = await openRegistry(dir);
  const cache: BlobCache = new Map();
  const packs: LoadedPack[] = [];
  const failures: string[] = [];
  for (const item of await registry.listIndex()) {
    if ('error' in item) {
      failures.push(`${item.id}: ${item.error}`);
      continue;
    }
    const read = await readPack(registry, item.entry, cache);
    if (read.ok) packs.push(read.pack);
    else failures.push(`${item.id}: ${read.problems.map((p) => p.message).join('; ')}`);
  }
  if (failures.length) {
    throw new FlowError(
      'registry_corrupt',
      prefixed('packs', `registry ${dir} has packs that fail verification (run "flowctl registry verify"):\n  ${failures.join('\n  ')}`),
      {
        data: { dir, failures },
      },
    );
  }
  return packs.sort((a, b) =>
    a.manifest.name === b.manifest.name ? comparePackVersions(b.manifest.version, a.manifest.version) : a.manifest.name < b.manifest.name ? -1 : 1,
  );
}

/** The flows of every pack in a registry (see RegistryFlow), by pack (newest version first), then flow name. */
export async function loadRegistryFlows(dir: string, options: LoadRegistryOptions = {}): Promise<RegistryFlow[]> {
  const out: RegistryFlow[] = [];
  for (const pack of await loadRegistryPacks(dir, options)) {
    for (const flow of pack.manifest.flows) {
      out.push({
        pack: pack.manifest.name,
        version: pack.manifest.version,
        pack_digest: pack.digest,
        name: flow.name,
        flow_digest: flow.flow_digest,
        spec: pack.specs.get(flow.name)!,
      });
    }
  }
  return out;
}

export interface LoadRegistryToolsOptions extends LoadRegistryOptions {
  /** Runs a composite tool's flow. Required to call the tools; compiling against them never calls it. */
  runFlow: FlowRunner;
  /** The runtime's tools: a pack that pins a provided tool whose runtime contract differs fails (`pack_tool_mismatch`). */
  runtimeTools?: ToolRegistry;
}

/**
 * The composite tools of every pack in a registry, runnable. Tools the runtime provides are not
 * returned (the runtime has them) but their pinned contracts are checked against `runtimeTools`.
 * The same ref@version in two packs must be the same contract run by the same FlowSpec, else
 * FlowError `pack_tool_conflict`.
 */
export async function loadRegistryTools(dir: string, options: LoadRegistryToolsOptions): Promise<Tool[]> {
  const byId = new Map<string, { tool: Tool; flow: Digest; pack: string }>();
  for (const pack of await loadRegistryPacks(dir, options)) {
    const where = packId(pack.manifest.name, pack.manifest.version);
    for (const entry of pack.manifest.tools) {
      const id = `${entry.ref}@${entry.version}`;
      const contract = pack.contracts.get(entry.contract_digest)!;
      if (!entry.implementation) {
        const runtime = options.runtimeTools?.get(entry.ref, entry.version);
        if (options.runtimeTools && (!runtime || digestOf(runtime.contract) !== entry.contract_digest)) {
          throw new FlowError(
            'pack_tool_mismatch',
            prefixed('packs', `${where} pins ${id} ${entry.contract_digest}, the runtime has ${runtime ? digestOf(runtime.contract) : 'no such tool'}`),
            {
              data: { pack: where, tool: id, expected: entry.contract_digest, actual: runtime ? digestOf(runtime.contract) : null },
            },
          );
        }
        continue;
      }
      const flowEntry = pack.manifest.flows.find((f) => f.name === entry.implementation!.flow)!;
      const seen = byId.get(id);
      if (seen) {
        if (digestOf(seen.tool.contract) !== entry.contract_digest || seen.flow !== flowEntry.flow_digest) {
          throw new FlowError('pack_tool_conflict', prefixed('packs', `tool ${id} is defined differently by ${seen.pack} and ${where}`), {
            data: { tool: id, packs: [seen.pack, where] },
          });
        }
        continue;
      }
      const spec = pack.specs.get(flowEntry.name)!;
      byId.set(id, { tool: compositeTool(contract, spec, options.runFlow), flow: flowEntry.flow_digest, pack: where });
    }
  }
  return [...byId.values()].map((v) => v.tool);
}
