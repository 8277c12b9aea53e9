import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { deepFreeze, type Digest, digestOf } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { Clock, IdSource, Logger } from '../ports/clock.js';
import type { RunLease, Storage } from '../ports/storage.js';
import type { RunStatus } from '../run/types.js';
import { builtinTools } from '../tools/builtins/index.js';
import { checkToolPolicy } from '../tools/policy.js';
import { createToolRegistry } from '../tools/registry.js';
import type { ToolRegistry } from '../tools/types.js';
import { cryptoIds, silentLogger, systemClock } from './defaults.js';
import { createMemoryStorage } from './memory-storage.js';
import { assertFlowSpec } from './spec-guard.js';
import { createStorageRuntime, type StorageRuntime } from './storage-runtime.js';
import type { EngineOptions, RunOptions, RunTarget } from './types.js';

export const DEFAULT_FRONT = 'rest';
const DEFAULT_LEASE_MS = 30_000;
export const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'canceled']);
// FlowSpecs are immutable and named by their digest, so a read one can be kept: a run by name then
// costs one deploy lookup (which may move, so it is never cached) and no spec read or copy.
const SPEC_CACHE_SIZE = 256;

/** A run in flight in this engine (sync or async), so cancel and dispose can abort and await it. */
export interface InflightRun {
  controller: AbortController;
  done: Promise<unknown>;
}

/**
 * What the engine's parts share: the options with their defaults, the wrapped storage, this
 * instance's lease settings, the runs in flight, and spec resolution. One per createEngine.
 */
export interface EngineContext {
  /** The options with the storage filled in (memory when none was given). */
  options: EngineOptions & { storage: Storage };
  storage: StorageRuntime;
  clock: Clock;
  ids: IdSource;
  logger: Logger;
  tools: ToolRegistry;
  cwd: string;
  inflight: Map<string, InflightRun>;
  /** This engine instance's lease owner id. */
  owner: string;
  host: string;
  leaseMs: number;
  sweepMs: number;
  /**
   * A store that applies a record change atomically with a journal append (flags.appendUpdatesRun)
   * gets the run's `running` with its run_started and its end with its run_finished: two writes fewer
   * per run, and the record never lags the journal.
   */
  recordWithEntries: boolean;
  durable: boolean;
  readonly disposed: boolean;
  markDisposed(): void;
  /** Throws `engine_disposed` once dispose was called. */
  alive(): void;
  /** A lease for a run this engine executes now. */
  newLease(): RunLease;
  /** A run's own policy is checked before its run record exists. */
  checkRunPolicy(runOptions: RunOptions | undefined): void;
  putSpec(spec: FlowSpec): Promise<Digest>;
  getSpec(digest: Digest): Promise<FlowSpec | undefined>;
  resolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec } | undefined>;
  mustResolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec }>;
}

export function createEngineContext(given: EngineOptions = {}): EngineContext {
  // No storage given: runs kept in this process's memory, which is all a script that compiles and
  // runs a flow needs (issue 32: `createEngine().run({ spec }, inputs)`).
  const options: EngineOptions & { storage: Storage } = { ...given, storage: given.storage ?? createMemoryStorage() };
  const storage = createStorageRuntime(options.storage);
  if (options.toolPolicy !== undefined) checkToolPolicy(options.toolPolicy);
  // Leases (docs/journal.md, "Leases and recovery"): this engine instance's owner id, and lease times
  // in wall-clock ms (Date.now, not the injected clock: a lease is about liveness, not journal time).
  const owner = randomUUID();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) throw new FlowError('invalid_options', '[flowctl] [engine] leaseMs must be a positive number');
  const host = hostname();
  let disposed = false;

  const alive = () => {
    if (disposed) throw new FlowError('engine_disposed', '[flowctl] [engine] the engine was disposed');
  };

  async function putSpec(spec: FlowSpec): Promise<Digest> {
    alive();
    assertFlowSpec(spec);
    const digest = digestOf(spec);
    await storage.specs.put(digest, spec);
    return digest;
  }

  const specCache = new Map<Digest, FlowSpec>();
  async function getSpec(digest: Digest): Promise<FlowSpec | undefined> {
    const cached = specCache.get(digest);
    if (cached) return cached;
    const spec = await storage.specs.get(digest);
    if (spec) {
      if (specCache.size >= SPEC_CACHE_SIZE) specCache.delete(specCache.keys().next().value!);
      specCache.set(digest, deepFreeze(spec));
    }
    return spec;
  }

  async function resolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec } | undefined> {
    alive();
    if ('spec' in target) return { digest: await putSpec(target.spec), spec: target.spec };
    const digest = 'digest' in target ? target.digest : await storage.deploys.get(target.front ?? DEFAULT_FRONT, target.name);
    if (!digest) return undefined;
    const spec = await getSpec(digest);
    return spec && { digest, spec };
  }

  async function mustResolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec }> {
    const found = await resolve(target);
    if (found) return found;
    const what =
      'name' in target
        ? `flow "${target.name}" is not deployed on front "${target.front ?? DEFAULT_FRONT}"`
        : `no FlowSpec ${'digest' in target ? target.digest : ''} is stored`;
    throw new FlowError('not_found', `[flowctl] [engine] ${what}`);
  }

  return {
    options,
    storage,
    clock: options.clock ?? systemClock(),
    ids: options.ids ?? cryptoIds(),
    logger: options.logger ?? silentLogger(),
    tools: options.tools ?? createToolRegistry(builtinTools()),
    cwd: options.cwd ?? process.cwd(),
    inflight: new Map(),
    owner,
    host,
    leaseMs,
    sweepMs: options.sweepMs ?? (options.storage.flags?.durable ? leaseMs : 0),
    recordWithEntries: options.storage.flags?.appendUpdatesRun === true,
    durable: options.storage.flags?.durable === true,
    get disposed() {
      return disposed;
    },
    markDisposed() {
      disposed = true;
    },
    alive,
    newLease: () => ({ owner, expires_at: new Date(Date.now() + leaseMs).toISOString(), pid: process.pid, host }),
    checkRunPolicy(runOptions) {
      if (runOptions?.toolPolicy !== undefined) checkToolPolicy(runOptions.toolPolicy);
    },
    putSpec,
    getSpec,
    resolve,
    mustResolve,
  };
}
