import type { Digest, FlowSpec } from '../src/engine-entry.js';
import { BUILD_ID } from './build-id.js';
import type { CliIO } from './io.js';
import { specToolRefs } from './project.js';
import { readFlowArg, type LoadedFlow } from './flow-files.js';
import { cliToolRegistry, compileFailure, compileLoaded, loadedToolRefs, loadFlowRead } from './resolve-flow.js';
import { digestBytes } from '../src/canonical.js';
import { contractDigest } from '../src/tools/contract.js';
import type { ToolRegistry } from '../src/tools/types.js';
import { createSpecCache, type SpecCacheKey } from './spec-cache.js';

export interface RunSpecOptions<T> {
  /**
   * Load what the flow's tool refs need (browser tools, installed packs) and register it for
   * compiling; called once, before the cached entry's tools are checked or the flow compiles.
   * `cached` is the cached spec when there is an entry (it is what runs unless the tools changed).
   */
  openTools(refs: string[], cached: FlowSpec | undefined): Promise<T>;
  /** Remember a new compile in the cache (false for `--dry`, which writes nothing). */
  write: boolean;
  /** The build the cache keys on. Default the running CLI's (none when run from sources: no cache). */
  build?: string;
}

export interface RunSpec<T> {
  /** What openTools returned. */
  opened: T;
  spec: FlowSpec;
  flow_digest: Digest;
  /** Whether the spec came from the compiled-spec cache. */
  cached: boolean;
}

/**
 * The FlowSpec `flowctl run <flow>` runs: from the compiled-spec cache when its entry for these bytes,
 * this lock, this build and these tools is there and verifies (spec-cache.ts), else loaded and
 * compiled (one read and one load of the file) and remembered. `FLOWCTL_SPEC_CACHE=off` compiles
 * every time and leaves the cache alone. FlowError `flow_not_found`, `bad_lock`, `compile_failed`.
 */
export async function resolveRunSpec<T>(flowArg: string, io: CliIO, options: RunSpecOptions<T>): Promise<RunSpec<T>> {
  const read = await readFlowArg(flowArg, io);
  const build = options.build ?? BUILD_ID;
  const cache = build !== undefined && io.env.FLOWCTL_SPEC_CACHE !== 'off' ? createSpecCache(io.cwd) : undefined;
  const key: SpecCacheKey | undefined = build === undefined ? undefined : { build, file: read.file.file, source: read.file.text, lock: read.lockText };
  const hit = cache && key ? await cache.read(key) : undefined;
  let loaded: LoadedFlow | undefined;
  let opened: T;
  if (hit) {
    opened = await options.openTools(specToolRefs(hit.spec), hit.spec);
  } else {
    loaded = await loadFlowRead(read);
    opened = await options.openTools(loadedToolRefs(loaded), undefined);
  }
  const tools = toolsDigest(cliToolRegistry());
  if (hit && hit.tools_digest === tools) return { opened, spec: hit.spec, flow_digest: hit.flow_digest, cached: true };
  const compiled = compileLoaded(read, loaded ?? (await loadFlowRead(read)));
  if (!compiled.result.ok) throw compileFailure(compiled);
  const { spec, flow_digest } = compiled.result;
  if (cache && key && options.write) await cache.write(key, { spec, flow_digest, tools_digest: tools });
  return { opened, spec, flow_digest, cached: false };
}

/** The digest of a registry: every tool's ref, version and contract digest, sorted. */
export function toolsDigest(registry: ToolRegistry): Digest {
  const lines = registry
    .list()
    .map((t) => `${t.contract.ref}@${t.contract.version} ${contractDigest(t.contract)}`)
    .sort();
  return digestBytes(lines.join('\n'));
}
