import type { Digest } from '../canonical.js';
import type { EgressGuard } from './egress.js';
import type { ToolPolicy } from './policy.js';

/**
 * Capability words from spec/engine.md. A step is outward-facing when its resolved contract declares
 * `net`, `fs`, `browser` or `spawn`. `secrets` means the tool may receive resolved secret values.
 */
export type Capability = 'net' | 'fs' | 'browser' | 'spawn' | 'secrets';
export const CAPABILITIES: readonly Capability[] = ['net', 'fs', 'browser', 'spawn', 'secrets'];
export const OUTWARD_CAPABILITIES: readonly Capability[] = ['net', 'fs', 'browser', 'spawn'];

/** A JSON Schema (draft 2020-12 subset); validated with ajv where validation is needed. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool contract. `contract_digest` = digestOf(contract) over exactly these fields (canonical JSON).
 * `version` is a full semver `MAJOR.MINOR.PATCH`; flows reference `ref@1`, `ref@1.2` or `ref@1.2.3`.
 */
export interface ToolContract {
  ref: string;
  version: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  capabilities: Capability[];
}

/** An outward effect a tool reports; journaled as `effect_recorded`. */
export interface Effect {
  kind: 'net' | 'fs' | 'spawn' | 'browser';
  /** host for net, path (relative to the project or sandbox root) for fs, command for spawn, page origin for browser. */
  target: string;
  /** Stable across replays of the same run and step: the runner derives it when the tool gives none. */
  idempotency_key?: string;
}

/** A non-fatal finding journaled with the step (e.g. locator `drift`). */
export interface StepWarning {
  code: string;
  message: string;
  data?: unknown;
}

/** Per-run resources a tool can share across steps (e.g. one browser context per run), disposed at run end. */
export interface RunScope {
  /** Get or create the resource under `key`; `dispose` runs once when the run ends (success, failure or timeout). */
  get<T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void> | void): Promise<T>;
}

export interface ArtifactSink {
  /**
   * Store bytes as a run artifact; resolves their digest, which the journal references, once stored.
   * The step lists the artifact from the call on: a tool need not wait for the write (the run does,
   * before it finishes), but should handle its rejection.
   */
  put(bytes: Uint8Array, mediaType: string): Promise<Digest>;
  /**
   * An artifact whose bytes come after the step returns (a screenshot taken from the page's frames
   * once the step's change is drawn): called during the step, it lists the artifact when `bytes`
   * resolves (`undefined`: none after all). The step's journal entry waits for it; the run goes on.
   * `hurry` is called when the run is finishing: resolve `bytes` as soon as possible. Bytes not there
   * within LATE_ARTIFACT_MAX_MS are dropped with a warning. Optional: a host without it gets `put`s only.
   */
  later?(bytes: Promise<Uint8Array | undefined>, mediaType: string, hurry?: () => void): void;
}

export interface ToolLogger {
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
}

/**
 * Files by the path (and digest) a flow names them with, for hosts that do not keep them on disk.
 * `undefined`: no such file.
 */
export interface FileSource {
  read(file: { path: string; digest?: string }): Promise<Uint8Array | undefined>;
}

export interface ToolContext {
  runId: string;
  stepId: string;
  attempt: number;
  /** Aborted on the step's timeout and on run cancellation. */
  signal: AbortSignal;
  /** Deadline for this attempt in ms (the step's timeout). */
  timeoutMs: number;
  /** The directory relative paths resolve against (the project root, or the sandbox root). */
  cwd: string;
  effect(effect: Effect): void;
  warn(warning: StepWarning): void;
  scope: RunScope;
  artifacts?: ArtifactSink;
  logger: ToolLogger;
  /** Options passed by the host for this tool family (e.g. screenshots on). */
  options?: Record<string, unknown>;
  /**
   * Whether `text` holds a secret value resolved in this run (so a tool can treat it as sensitive,
   * e.g. black out the field it typed into on screenshots). Absent when the host tracks no secrets.
   */
  isSecret?(text: string): boolean;
  /**
   * The run's egress guard, when its tool policy has one (docs/tools.md, "Policy"). A `net` or
   * `browser` tool checks every address it connects to with it, at connect time, and fails
   * `egress_denied` when it refuses. Absent: no guard.
   */
  egress?: EgressGuard;
  /** The run's tool policy, for tools that start runs of their own (composite tools pass it on). */
  policy?: ToolPolicy;
  /** Where upload files are read, when the host keeps them off disk (`RunOptions.files`); absent: `cwd`. */
  files?: FileSource;
  /**
   * The step is optional (StepSpec `optional`): when what it acts on is absent, the tool fails
   * `target_absent` instead of its usual error, and the run skips the step (`step_skipped`).
   */
  optional?: boolean;
}

/**
 * What an implementation says about itself beside its contract (not part of the contract, so not of
 * its digest): flags the engine reads instead of sniffing tools.
 */
export interface ToolFlags {
  /**
   * The contract's `fs` is only for reading the files a flow names (uploads), and the tool reads them
   * through `ctx.files` whenever the run supplies a FileSource (`RunOptions.files`). A step of such a
   * run then needs no `fs` (it never touches the host's disk); without a file source it reads the disk
   * and needs `fs` as declared (docs/tools.md, "Policy"). Default false.
   */
  filesFromSource?: boolean;
}

/** A tool implementation: a contract plus the code that honours it. */
export interface Tool {
  contract: ToolContract;
  /** Default: no flags. */
  flags?: ToolFlags;
  run(input: any, ctx: ToolContext): Promise<unknown>;
}

/** Resolves `ref@range` to a concrete contract and implementation. */
export interface ToolRegistry {
  /** Highest version of `ref` matching `range` (`1`, `1.2`, `1.2.3`), or undefined. */
  resolve(ref: string, range: string): Tool | undefined;
  /** Exact lookup by ref and full version. */
  get(ref: string, version: string): Tool | undefined;
  list(): Tool[];
}
