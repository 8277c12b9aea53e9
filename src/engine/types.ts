import type { Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import type { Clock, IdSource, Logger } from '../ports/clock.js';
import type { Executor } from '../ports/executor.js';
import type { SecretStore } from '../ports/secrets.js';
import type { RunListQuery, RunRecord, Storage } from '../ports/storage.js';
import type { JournalEntry, Run, RunStatus } from '../run/types.js';
import type { ToolRegistry } from '../tools/types.js';

export interface EngineOptions {
  storage: Storage;
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
   * Let callers name any secret for a secret input (`{"token": "secret:other"}`), on every front.
   * Default false: a secret input resolves only the reference its flow declares (its `default`, else
   * `secret:<input name>`); another is `invalid_inputs`. `flowctl serve --allow-secret-refs`.
   */
  allowSecretRefs?: boolean;
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
  /**
   * This run's secret store, instead of the engine's (one engine serves many tenants: the hosted
   * service passes the run's org secret store). Used for the pre-run check and inside steps.
   */
  secrets?: SecretStore;
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
  getRun(id: string): Promise<Run | undefined>;
  listRuns(query?: RunListQuery): Promise<RunRecord[]>;
  replay(source: ReplaySource, options?: { mode?: ReplayMode; spec?: FlowSpec } & RunOptions): Promise<Run>;
  watch(runId: string, options?: { fromSeq?: number; signal?: AbortSignal }): AsyncIterable<JournalEntry>;
  /** The effect summary of a FlowSpec (for `--dry` and confirmation prompts). */
  summarizeEffects(spec: FlowSpec, inputs?: Record<string, unknown>): EffectSummary;
  dispose(): Promise<void>;
}
