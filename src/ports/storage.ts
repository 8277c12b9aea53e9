import type { Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import type { JournalEntry, RunStatus, StepError } from '../run/types.js';

/**
 * Storage ports, split by aggregate. An adapter implements all four and declares its `flags`.
 * Every method may throw FlowError; codes used by the core: `journal_conflict` (append at a seq that
 * is not the next one), `run_exists` (createRun with a used id), `not_found`.
 */

/** FlowSpecs by digest. Immutable: putting the same digest twice is a no-op. */
export interface SpecStore {
  put(digest: Digest, spec: FlowSpec): Promise<void>;
  get(digest: Digest): Promise<FlowSpec | undefined>;
}

/** name -> digest per front (e.g. `rest`, `mcp`). Redeploying moves the pointer; it never rebuilds. */
export interface DeployStore {
  set(front: string, name: string, digest: Digest): Promise<void>;
  get(front: string, name: string): Promise<Digest | undefined>;
  list(front: string): Promise<{ name: string; digest: Digest }[]>;
}

/** The stored header of a run; the Run object is this plus its journal. */
export interface RunRecord {
  id: string;
  flow_digest: Digest;
  flow_name: string;
  status: RunStatus;
  started_at: string;
  finished_at?: string;
  output?: unknown;
  error?: StepError & { step?: string };
  /** The run this one replays, if any. */
  replay_of?: string;
  /**
   * The run's resolved inputs (secret inputs only as their `secret:` references, never values), so
   * any process sharing the store can execute a prepared run (`engine.execute`).
   */
  inputs?: Record<string, unknown>;
  /** The executing process's lease (docs/journal.md, "Leases and recovery"). */
  lease?: RunLease;
  /** Set by `engine.cancel`: the executor's lease heartbeat sees it and aborts the run. */
  cancel_requested?: boolean;
}

/** Who executes a run, until when. Renewed by the executor's heartbeat; an expired lease is recovered. */
export interface RunLease {
  /** The executing engine instance (a random id per engine). */
  owner: string;
  /** ISO time after which the run counts as abandoned. */
  expires_at: string;
  /** The executing process's pid and host: a store local to one machine may recover a dead pid at once. */
  pid?: number;
  host?: string;
  /**
   * A start deadline, not an executor (`engine.prepare` with `startWithinMs`): nobody executes the
   * run yet; `execute` replaces it with its own lease. Once `expires_at` passes, recovery ends the
   * never-started run `failed` with `start_timeout`; a cancel closes it at once.
   */
  prepared?: true;
}

export interface RunListQuery {
  limit?: number;
  /** Only runs that started strictly before this run (cursor for the next page). */
  before?: string;
  flow_name?: string;
  /** Only runs with one of these statuses (e.g. the non-terminal ones, for recovery). */
  status?: RunStatus[];
}

/** The record fields a run's executor (or a cancel) changes after creation. */
export type RunPatch = Partial<Pick<RunRecord, 'status' | 'finished_at' | 'output' | 'error' | 'lease' | 'cancel_requested'>>;

export interface RunStore {
  create(run: RunRecord): Promise<void>;
  get(id: string): Promise<RunRecord | undefined>;
  /** Newest first (by started_at, then id, descending). */
  list(query?: RunListQuery): Promise<RunRecord[]>;
  update(id: string, patch: RunPatch): Promise<void>;
}

export interface JournalStore {
  /**
   * Append `entry` at `entry.seq`, which must equal the current length of the run's journal.
   * Otherwise throw FlowError `journal_conflict`: a second writer fails instead of forking.
   * `text`, when given, is the entry's JSON text (JSON.parse(text) deep-equals `entry`, key order
   * aside): the engine passes the text it made while sealing, so a store that keeps JSON need not
   * serialise the entry again. A store may ignore it.
   * `run`, when given and the store declares `flags.appendUpdatesRun`, is applied to the run record
   * (as `runs.update` would) atomically with the append: both or neither, so a refused append leaves
   * the record as it was. A store without the flag ignores it; the engine then calls `runs.update`
   * itself after the append.
   */
  append(runId: string, entry: JournalEntry, text?: string, run?: RunPatch): Promise<void>;
  /** Entries with seq >= fromSeq, in order. */
  read(runId: string, fromSeq?: number): Promise<JournalEntry[]>;
  /**
   * Entries with seq >= fromSeq as they are appended, in order and without gaps, starting with those
   * already stored. Ends after `run_finished`, or when `signal` aborts.
   */
  watch(runId: string, options?: { fromSeq?: number; signal?: AbortSignal }): AsyncIterable<JournalEntry>;
}

/** Binary run artifacts (screenshots) by digest. */
export interface ArtifactStore {
  put(digest: Digest, bytes: Uint8Array, mediaType: string): Promise<void>;
  get(digest: Digest): Promise<{ bytes: Uint8Array; mediaType: string } | undefined>;
}

export interface StorageFlags {
  /** Watch sees appends made by other processes. */
  crossProcessWatch?: boolean;
  /** Data survives a process restart. */
  durable?: boolean;
  /**
   * `journal.append` applies its `run` patch to the run record in the same transaction. A wrapper
   * that passes an adapter's flags on must pass that fourth argument on too.
   */
  appendUpdatesRun?: boolean;
}

export interface Storage {
  readonly name: string;
  readonly flags: StorageFlags;
  specs: SpecStore;
  deploys: DeployStore;
  runs: RunStore;
  journal: JournalStore;
  artifacts?: ArtifactStore;
  /** Called once before first use (migrations, directories). */
  init?(): Promise<void>;
  /** Called once; releases pools, handles, watchers. */
  dispose?(): Promise<void>;
}
