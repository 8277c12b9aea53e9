import { DIGEST_PATTERN, digestOf, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { Engine } from './types.js';

/**
 * A flow as a front serves it: the name the caller gives it (unique only among the flows that
 * caller serves: two orgs may both serve an `invoice`), its FlowSpec and the digest it runs by.
 */
export interface ResolvedFlow {
  name: string;
  digest: Digest;
  spec: FlowSpec;
}

/** Resolve a flow once: its digest is computed here, and the launcher and MCP server run by it. */
export function resolveFlow(name: string, spec: FlowSpec): ResolvedFlow {
  return { name, digest: digestOfSpec(spec), spec };
}

// A FlowSpec object handed over without its digest is digested once, however often it is served.
const digests = new WeakMap<object, Digest>();

/** The digest of a FlowSpec object, computed once per object. */
export function digestOfSpec(spec: FlowSpec): Digest {
  let digest = digests.get(spec);
  if (digest === undefined) {
    digest = digestOf(spec);
    digests.set(spec, digest);
  }
  return digest;
}

/** The digest a served flow runs by: the one given (checked for form), else the spec's. */
export function servedDigest(flow: { name: string; spec: FlowSpec; digest?: unknown }, where: string): Digest {
  if (flow.digest === undefined) return digestOfSpec(flow.spec);
  if (typeof flow.digest !== 'string' || !DIGEST_PATTERN.test(flow.digest)) {
    throw new FlowError('invalid_flows', `[flowctl] [${where}] the digest of served flow "${flow.name}" is not a sha256:<64 hex> digest`);
  }
  return flow.digest as Digest;
}

// The specs each engine has stored for the launcher and MCP servers, by digest: a FlowSpec is
// immutable and named by its digest, so it is stored once per engine, not once per request or
// server. Bounded: an evicted digest is stored again (an idempotent write) on its next use.
const STORED_PER_ENGINE = 4096;
const stored = new WeakMap<Engine, Map<Digest, Promise<void>>>();

/**
 * Store a served flow's FlowSpec by its digest (`engine.putSpec`), once per engine and digest, and
 * check that the digest the caller resolved is the spec's. No deploy is written: the caller owns
 * the name, and runs go by digest.
 */
export function storeServedSpec(engine: Engine, flow: ResolvedFlow, where: string): Promise<void> {
  let byDigest = stored.get(engine);
  if (!byDigest) {
    byDigest = new Map();
    stored.set(engine, byDigest);
  }
  let entry = byDigest.get(flow.digest);
  if (!entry) {
    entry = engine.putSpec(flow.spec).then((digest) => {
      if (digest !== flow.digest) {
        throw new FlowError(
          'digest_mismatch',
          `[flowctl] [${where}] served flow "${flow.name}" was resolved with digest ${flow.digest}, but its FlowSpec digests to ${digest}`,
        );
      }
    });
    // A failed store (or a wrong digest) is tried again on the next use rather than cached.
    const key = flow.digest;
    const map = byDigest;
    entry.catch(() => {
      if (map.get(key) === entry) map.delete(key);
    });
    if (map.size >= STORED_PER_ENGINE) map.delete(map.keys().next().value!);
    map.set(key, entry);
  }
  return entry;
}
