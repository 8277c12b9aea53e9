import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestBytes, digestOf, isDigest, type Digest } from '../src/canonical.js';
import type { FlowSpec } from '../src/engine-entry.js';
import { STORE_DIR } from './layout.js';

/**
 * The compiled-spec cache of `flowctl run` (docs/cli.md, "Compiled-spec cache"): a project's flow
 * compiles once; later runs of the same bytes take the FlowSpec from `.flowctl/cache/compiled/`.
 *
 * An entry is keyed by everything compiling reads: the flow file's bytes, the bytes of `flowctl.lock`,
 * the flowctl build (its version and a digest of its sources, so a changed compiler never reads an
 * older build's entries) and the digest of the tool registry compiled against (every tool's ref,
 * version and contract digest: an installed pack that changes a contract is a miss). It is verified
 * on read: every key field must match, and the spec's digest must equal its content (digestOf), or
 * the entry is ignored (and rewritten by the compile that follows). One entry per flow file: a new
 * compile of the same file replaces the old entry, so the folder stays as small as the project.
 */

/** Where entries live, under the project folder. */
export const SPEC_CACHE_DIR = join(STORE_DIR, 'cache', 'compiled');
const FORMAT = 1;

/** What an entry is keyed by, before the tools are known. */
export interface SpecCacheKey {
  /** The flowctl build (version and source digest). */
  build: string;
  /** The project-relative name of the flow file. */
  file: string;
  /** The flow file's text, as compiled. */
  source: string;
  /** The text of `flowctl.lock`, undefined when there is none. */
  lock: string | undefined;
}

export interface CachedSpec {
  spec: FlowSpec;
  flow_digest: Digest;
  /** The registry digest (run-spec.ts, toolsDigest) the spec was compiled against. */
  tools_digest: Digest;
}

interface Entry {
  format: number;
  build: string;
  file: string;
  source_digest: Digest;
  lock_digest: Digest | null;
  tools_digest: Digest;
  flow_digest: Digest;
  spec: FlowSpec;
}

export interface SpecCache {
  /** The verified entry for this key, or undefined (none, another key, corrupt: all a miss). */
  read(key: SpecCacheKey): Promise<CachedSpec | undefined>;
  /** Remember a compiled spec. A failed write is ignored: the cache only ever saves time. */
  write(key: SpecCacheKey, entry: CachedSpec): Promise<void>;
}

let tempCounter = 0;

/** The spec cache of the project folder `cwd`. */
export function createSpecCache(cwd: string): SpecCache {
  const dir = join(cwd, SPEC_CACHE_DIR);
  const pathOf = (file: string) => join(dir, `${digestBytes(file).slice('sha256:'.length)}.json`);
  return {
    async read(key) {
      let entry: Partial<Entry>;
      try {
        entry = JSON.parse(await readFile(pathOf(key.file), 'utf8')) as Partial<Entry>;
      } catch {
        return undefined;
      }
      if (
        entry === null ||
        typeof entry !== 'object' ||
        entry.format !== FORMAT ||
        entry.build !== key.build ||
        entry.file !== key.file ||
        entry.source_digest !== digestBytes(key.source) ||
        entry.lock_digest !== (key.lock === undefined ? null : digestBytes(key.lock)) ||
        !isDigest(entry.tools_digest) ||
        !isDigest(entry.flow_digest) ||
        entry.spec === null ||
        typeof entry.spec !== 'object' ||
        !Array.isArray(entry.spec.steps)
      ) {
        return undefined;
      }
      // Content-addressed: a spec whose bytes changed no longer has its digest.
      try {
        if (digestOf(entry.spec) !== entry.flow_digest) return undefined;
      } catch {
        return undefined;
      }
      return { spec: entry.spec, flow_digest: entry.flow_digest, tools_digest: entry.tools_digest };
    },
    async write(key, cached) {
      const entry: Entry = {
        format: FORMAT,
        build: key.build,
        file: key.file,
        source_digest: digestBytes(key.source),
        lock_digest: key.lock === undefined ? null : digestBytes(key.lock),
        tools_digest: cached.tools_digest,
        flow_digest: cached.flow_digest,
        spec: cached.spec,
      };
      const path = pathOf(key.file);
      // Written whole, then renamed over the old entry: a reader sees the old entry or the new one.
      const temp = `${path}.${process.pid}.${++tempCounter}.tmp`;
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(temp, `${JSON.stringify(entry)}\n`);
        await rename(temp, path);
      } catch {
        await rm(temp, { force: true }).catch(() => {});
      }
    },
  };
}
