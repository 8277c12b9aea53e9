// flowctl: the package's main entry. Named exports only, so what is public is what this file lists;
// the rest of src/ (HTTP schemas, auth primitives, JSON and schema helpers, request guards) is
// internal. Beside it: flowctl/engine (the engine alone, a subset of this), flowctl/ports (port
// interfaces and adapter helpers), flowctl/packs, flowctl/testing, flowctl/adapters/<name>.
// See docs/architecture.md ("Entry points") for the map.
export { FlowError, isFlowError } from './errors.js';
export { canonicalJson, digestOf, prettyJson, DIGEST_PATTERN } from './canonical.js';
export type { Digest } from './canonical.js';

// The data: Flows and FlowSpecs, tools, runs and their journal
export type {
  InputType,
  FlowInput,
  RetryPolicy,
  FlowStep,
  Flow,
  InputContract,
  StepSpec,
  FlowSpec,
  CompiledFlow,
  Diagnostic,
} from './flow/types.js';
export type {
  Capability,
  JsonSchema,
  ToolContract,
  Effect,
  StepWarning,
  RunScope,
  ArtifactSink,
  ToolLogger,
  FileSource,
  ToolContext,
  ToolFlags,
  Tool,
  ToolRegistry,
} from './tools/types.js';
export { CAPABILITIES, OUTWARD_CAPABILITIES } from './tools/types.js';
export type {
  RunStatus,
  Run,
  StepError,
  ToolPin,
  JournalBase,
  JournalEvent,
  RunStartedEntry,
  StepStartedEntry,
  StepSucceededEntry,
  StepFailedEntry,
  StepSkippedEntry,
  EffectRecordedEntry,
  RunFinishedEntry,
  JournalEntry,
} from './run/types.js';
export { TERMINAL_STATUSES } from './run/types.js';
// The ports the engine takes; every port (the service's and the studio's too) is on flowctl/ports.
export type {
  Storage,
  StorageFlags,
  SpecStore,
  DeployStore,
  RunRecord,
  RunLease,
  RunListQuery,
  RunPatch,
  RunStore,
  JournalStore,
  ArtifactStore,
} from './ports/storage.js';
export type { SecretStore } from './ports/secrets.js';
export type { Executor } from './ports/executor.js';
export type { Clock, IdSource, Logger } from './ports/clock.js';

// Engine, runs, journal, replay (docs/journal.md)
export { createEngine } from './engine/engine.js';
export type { EngineOptions, RunTarget, EffectSummary, RunOptions, ReplayMode, ReplaySource, Engine } from './engine/types.js';
export { systemClock, cryptoIds, silentLogger } from './engine/defaults.js';
export { createFixedClock, createSequentialIds, type FixedClockOptions } from './engine/deterministic.js';
export { sealEntry, checkJournalChain, type UnsealedEntry } from './run/journal.js';
export { resolveInputs, type InputIssue, type ResolvedInputs, type ResolveInputsOptions } from './run/inputs.js';
export { summarizeEffects } from './run/effects.js';
export {
  JOURNAL_FIXTURE_FORMAT,
  toJournalFixture,
  writeJournalFixture,
  readJournalFixture,
  verifyJournal,
  type JournalFixture,
} from './run/fixture.js';

// Tool contracts and the built-in tools (docs/tools.md); sandbox providers are adapters (docs/sandbox.md)
export { createToolRegistry } from './tools/registry.js';
export { defineTool, contractDigest, checkContract, toolError, isRetryableError, abortError } from './tools/contract.js';
export { builtinTools } from './tools/builtins/index.js';
// Tool policy (docs/tools.md, "Policy"); the egress guard itself is on flowctl/ports
export { hostedToolPolicy, type ToolPolicy } from './tools/policy.js';
export type { EgressGuard, EgressLookup, EgressPolicy } from './tools/egress.js';

// The Flow language and the lock file (docs/flow-language.md)
export { compile, compileFlow, type CompileOptions, type CompileFlowOptions, type CompileResult } from './flow/compile.js';
export { parseFlowSource, type ParsedSource } from './flow/source.js';
export { DIAGNOSTIC_CODES, formatDiagnostic, type DiagnosticCode, type DiagnosticSink, type Locator, type PathSegment } from './flow/diagnostics.js';
export { emitYaml, emitTs, type EmitYamlOptions } from './flow/emit.js';
export { lintCompiled, registerLintRule, type LintContext, type LintRule } from './flow/lint.js';
export { emptyLock, parseLock, serializeLock, LOCK_FILE_NAME, type LockEntry, type LockFile } from './tools/lock.js';

// Recordings (docs/recordings.md): used by examples/engine-launcher to build its demo Recording.
export { buildRecording, recordingToFlow, writeRecording, parseRecording } from './record/index.js';
export type {
  Recording,
  RecordingFormat,
  RecordingInput,
  RecordedOp,
  RecordedFile,
  RecordOptions,
  BuiltRecording,
  RecordingToFlowOptions,
} from './record/index.js';

// REST launcher (docs/rest.md)
export {
  createLauncher,
  resolveFlow,
  type Launcher,
  type LauncherOptions,
  type LauncherFlow,
  type LauncherFlowSource,
  type ResolvedFlow,
  type ServedFlow,
} from './launcher/launcher.js';
export { buildOpenApi, type OpenApiFlow, type OpenApiOptions } from './launcher/openapi.js';

// MCP tools from flows (docs/mcp.md) and cron schedules (docs/schedule.md)
export { createMcpServer, type McpFlow, type McpLogLevel, type McpServerOptions } from './mcp/server.js';
export { parseCron, type CronSchedule, type ParseCronOptions } from './schedule/cron.js';
export { startScheduler, type Scheduler, type SchedulerOptions } from './schedule/scheduler.js';

// The hosted service (docs/hosted-api.md); its storage, queue and studio ports are on flowctl/ports
export { createHostedService, type HostedService, type HostedServiceOptions } from './service/hosted-service.js';
export type { StudioOptions } from './service/studio/live.js';
export type { RunLiveOptions } from './service/live/run-live.js';
export { settingsFromEnv, resolveSettings, type HostedSettings } from './service/settings.js';
export { RUN_QUEUE } from './service/domain/dispatch.js';
export type { RunWorker, RunWorkerStats } from './service/worker.js';
export { verifyAuditChain, type AuditChainReport } from './audit/chain.js';
