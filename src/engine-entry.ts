// flowctl/engine: the engine alone, for applications that embed it (compile, record, run, replay),
// without the hosted service, the launchers or MCP. The package root exports all of this too; this
// entry loads only what it names, so a process that runs flows starts faster (bench/RESULTS.md,
// "browser-todomvc"). Named exports only, so what is public is what this file lists.
export { FlowError, isFlowError } from './errors.js';
export { canonicalJson, digestOf, prettyJson, DIGEST_PATTERN } from './canonical.js';
export type { Digest } from './canonical.js';
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
// The ports the engine takes; every port, the service's and the studio's too, is on flowctl/ports.
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
export type { EngineOptions, RunTarget, EffectSummary, RunOptions, ReplayMode, ReplaySource, Engine } from './engine/types.js';
export { TERMINAL_STATUSES } from './run/types.js';
export { createEngine } from './engine/engine.js';
export { systemClock, cryptoIds, silentLogger } from './engine/defaults.js';
export { createFixedClock, createSequentialIds, type FixedClockOptions } from './engine/deterministic.js';
export { checkJournalChain, sealEntry, type UnsealedEntry } from './run/journal.js';
export { readJournalFixture, writeJournalFixture, verifyJournal, type JournalFixture } from './run/fixture.js';
export { createToolRegistry } from './tools/registry.js';
export { defineTool } from './tools/contract.js';
export { builtinTools } from './tools/builtins/index.js';
export { hostedToolPolicy, type ToolPolicy } from './tools/policy.js';
export type { EgressGuard, EgressLookup, EgressPolicy } from './tools/egress.js';
export { compile, compileFlow, type CompileOptions, type CompileFlowOptions, type CompileResult } from './flow/compile.js';
export { emptyLock, parseLock, serializeLock, type LockEntry, type LockFile } from './tools/lock.js';
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
