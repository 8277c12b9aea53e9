import type { Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import type { Clock, IdSource, Logger } from '../ports/clock.js';
import type { Executor } from '../ports/executor.js';
import type { SecretStore } from '../ports/secrets.js';
import type { RunListQuery, RunRecord, Storage } from '../ports/storage.js';
import type { JournalEntry, Run, RunStatus } from '../run/types.js';
import type { ToolPolicy } from '../tools/policy.js';
import type { FileSource, ToolRegistry } from '../tools/types.js';

export interface EngineOptions {
  /** Default: a new in-memory storage (flowctl/adapters/storage-memory): runs last as long as the process. */
  storage?: Storage;
  /** Sandbox provider for the tools it accepts (shell, fs); everything else runs in-process. */
  executor?: Executor;
  /** Default: no secret store (a flow that needs a secret fails with `secret_not_found`). */
  secrets?: SecretStore;
  /** Default: the system clock. */
  clock?: Clock;
  /** Default: crypto uuid v4. */
  ids?: IdSource;
  /** Default: silent. */
  logger?: Logger;
  /** Default: the built-in tools (plus browser tools when the playwright executor is registered). */
  tools?: ToolRegistry;
  /** Root for relative paths of fs tools (default process.cwd()). */
  cwd?: string;
  /** Per tool-family options, e.g. `{ browser: { screenshots: true } }`. */
  toolOptions?: Record<string, Record<string, unknown>>;
  /**
   * What tools may do (capabilities, egress guard) in every run that does not bring its own
   * (`RunOptions.toolPolicy`). Default: none, everything allowed. A shared host passes
   * `hostedToolPolicy()` (docs/tools.md, "Policy"). A malformed policy is `invalid_tool_policy`.
   */
  toolPolicy?: ToolPolicy;
  /**
   * Let callers name any secret for a secret input (`{"token": "secret:other"}`), on every front.
   * Default false: a secret input resolves only the reference its flow declares (its `default`, else
   * `secret:<input name>`); another is `invalid_inputs`. `flowctl serve --allow-secret-refs`.
   */
  allowSecretRefs?: boolean;
  /**
   * How long an executing run's lease lasts without a heartbeat (ms, default 30000). The executor
   * renews it every third of that; a run whose lease expired is ended `failed` with `worker_lost` by
   * recovery (docs/journal.md, "Leases and recovery").
   */
  leaseMs?: number;
  /**
   * Interval of the recovery sweep (`recover()`), ms. Default: `leaseMs` on a durable store (which is
   * also swept once when the engine starts), none on others. 0 turns the periodic sweep off.
   */
  sweepMs?: number;
  /**
   * Also recover a run at once when its lease names a process on this host that is gone (a store local
   * to one machine, as the CLI's `.flowctl`). Default false: only an expired lease counts.
   */
  recoverDeadPids?: boolean;
}

/** What a caller runs: a deployed name, a stored digest, or a FlowSpec given inline. */
export type RunTarget = { name: string; front?: string } | { digest: Digest } | { spec: FlowSpec };

/** Summary of the outward effects a flow can have, from its resolved contracts' capabilities. */
export interface EffectSummary {
  outward: boolean;
  steps: { step: string; tool: string; capabilities: string[]; targets: string[] }[];
  net_hosts: string[];
  fs_writes: string[];
  spawns: string[];
  browser: boolean;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Called once before the first outward step; resolve false to stop the run before any effect. */
  confirm?: (summary: EffectSummary) => Promise<boolean>;
  /** Called for every entry as it is appended. */
  onEntry?: (entry: JournalEntry) => void;
  /** Called once with the run's id as soon as its record exists (run, execute), before its first entry. */
  onRunId?: (runId: string) => void;
  /**
   * This run's secret store, instead of the engine's (one engine serves many tenants: the hosted
   * service passes the run's org secret store). Used for the pre-run check and inside steps.
   */
  secrets?: SecretStore;
  /**
   * This run's tool policy, replacing the engine's (not merged with it). Refused capabilities fail
   * their step `tool_denied`, refused destinations `egress_denied` (docs/tools.md, "Policy"). A
   * malformed policy is `invalid_tool_policy`, before any run is created.
   */
  toolPolicy?: ToolPolicy;
  /**
   * Where this run's upload steps read their files, instead of the folder relative paths resolve
   * against (`cwd`): a host that keeps files elsewhere (the hosted service: per org, by digest) passes
   * its own. With it, no upload reads the disk.
   */
  files?: FileSource;
}

export type ReplayMode = 'hermetic' | 'verify' | 'rerun';

/**
 * A stored run by id, or a recorded journal (e.g. from a fixture file). With a journal, `run_id`
 * names the recorded run for the replay's `replay_of` (default: the digest of its run_started entry).
 */
export type ReplaySource = { run_id: string } | { journal: JournalEntry[]; run_id?: string };

export interface Engine {
  /** Store a FlowSpec and point `name` at it on `front` (default `rest`). Returns its digest. */
  deploy(name: string, spec: FlowSpec, options?: { front?: string }): Promise<Digest>;
  /** Store a FlowSpec by digest without deploying it. */
  putSpec(spec: FlowSpec): Promise<Digest>;
  resolve(target: RunTarget): Promise<{ digest: Digest; spec: FlowSpec } | undefined>;
  /** Sync: resolves with the finished Run. Inputs are validated first (FlowError `invalid_inputs`, no run created). */
  run(target: RunTarget, inputs?: Record<string, unknown>, options?: RunOptions): Promise<Run>;
  /** Async: returns at once; poll getRun. */
  start(target: RunTarget, inputs?: Record<string, unknown>, options?: RunOptions): Promise<{ run_id: string; status: RunStatus }>;
  /**
   * Validate inputs (and resolve secret inputs, as `run` does), then store the run record with its
   * FlowSpec digest and its inputs (secret inputs only as references): status `pending`. Any engine
   * over the same store can then `execute` it. With `startWithinMs`, a run no engine starts within
   * that time is ended `failed` with `start_timeout` by recovery (a queue whose message for it was
   * lost, or never sent because the caller died): a prepared run is never left pending for good.
   * Without it, the run waits for an executor for ever. With `store`, the record is handed to it
   * instead of being written to the engine's storage (once the inputs and secrets are resolved): the
   * caller writes it, e.g. in a transaction of its own with other writes (the hosted service's queued
   * run, its execution row and its queue message); prepare fails as `store` fails.
   */
  prepare(
    target: RunTarget,
    inputs?: Record<string, unknown>,
    options?: Pick<RunOptions, 'secrets'> & { startWithinMs?: number; store?: (record: RunRecord) => Promise<void> },
  ): Promise<{ run_id: string; status: RunStatus }>;
  /**
   * End a prepared run that no executor started (pending, no executor's lease) as `failed` with
   * this error (the hosted service's orphan sweep: a queued run whose queue message is gone).
   * Resolves true when it ended it, false when the run is unknown, started or already ended.
   */
  abandon(runId: string, error: { code: string; message: string }): Promise<boolean>;
  /**
   * Execute a prepared run (from this or another process sharing the store), holding its lease while
   * it runs. Resolves with the finished Run. FlowError `not_found`, or `run_not_pending` when the run
   * already started or finished.
   */
  execute(runId: string, options?: RunOptions): Promise<Run>;
  /**
   * End a pending or running run as `canceled` (journal run_finished). A run executing in another
   * engine instance is asked through the store and stops at its next lease heartbeat. Resolves with
   * the run's final status once it is terminal (a run that already finished keeps its status).
   */
  cancel(runId: string, options?: { signal?: AbortSignal }): Promise<{ run_id: string; status: RunStatus }>;
  /**
   * The recovery sweep: every non-terminal run whose lease expired (or, with `recoverDeadPids`,
   * whose process on this host is gone) is ended `failed` with code `worker_lost`. Returns the ids it
   * ended. Recovered runs are never executed again.
   */
  recover(): Promise<string[]>;
  getRun(id: string): Promise<Run | undefined>;
  /**
   * A run artifact's bytes and media type by its digest (the `artifacts` of a `step_succeeded`
   * entry), from the storage's artifact store. Undefined when the store has none by that digest or
   * the storage keeps no artifacts. Artifacts are content-addressed and shared by every run: a caller
   * serving them to a tenant checks first that the digest is in a run of that tenant's journal.
   */
  getArtifact(digest: Digest): Promise<{ bytes: Uint8Array; mediaType: string } | undefined>;
  listRuns(query?: RunListQuery): Promise<RunRecord[]>;
  replay(source: ReplaySource, options?: { mode?: ReplayMode; spec?: FlowSpec } & RunOptions): Promise<Run>;
  /** The run's entries as they are appended; ends when the run is terminal by any path (recovery included). */
  watch(runId: string, options?: { fromSeq?: number; signal?: AbortSignal }): AsyncIterable<JournalEntry>;
  /** The effect summary of a FlowSpec (for `--dry` and confirmation prompts). */
  summarizeEffects(spec: FlowSpec, inputs?: Record<string, unknown>): EffectSummary;
  dispose(): Promise<void>;
}
