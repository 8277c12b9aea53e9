// Public barrel: re-exports only. See docs/architecture.md for the map of the code.
export { FlowError, isFlowError } from './errors.js';
export { canonicalJson, digestOf, digestBytes, isDigest, prettyJson, sortKeysDeep, DIGEST_PATTERN } from './canonical.js';
export type { Digest } from './canonical.js';
export type * from './flow/types.js';
export type * from './tools/types.js';
export { CAPABILITIES, OUTWARD_CAPABILITIES } from './tools/types.js';
export type * from './run/types.js';
export { TERMINAL_STATUSES } from './run/types.js';
export type * from './ports/index.js';
export { SECRET_REF_PATTERN, MASK } from './ports/index.js';

// Engine, runs, journal, replay (docs/journal.md)
export { createEngine } from './engine/engine.js';
export type * from './engine/types.js';
export { systemClock, cryptoIds, silentLogger } from './engine/defaults.js';
export { createFixedClock, createSequentialIds, type FixedClockOptions } from './engine/deterministic.js';
export { createStorageRuntime, type StorageRuntime } from './engine/storage-runtime.js';
export { RunSchema, JournalEntrySchema, parseRun, parseJournal } from './run/run-schema.js';
export { entryDigest, sealEntry, checkJournalChain, checkJournalFlowDigest } from './run/journal.js';
export { resolveInputs, type InputIssue, type ResolvedInputs, type ResolveInputsOptions } from './run/inputs.js';
export { summarizeEffects, isOutward } from './run/effects.js';
export { compareRunsNewestFirst, filterRunList } from './run/run-list.js';
export {
  JOURNAL_FIXTURE_FORMAT,
  toJournalFixture,
  writeJournalFixture,
  readJournalFixture,
  verifyJournal,
  type JournalFixture,
} from './run/fixture.js';
export { SecretMask, isSecretRef, defaultSecretRef, declaredSecretRef, secretRefName } from './secrets/index.js';
export { createToolRegistry } from './tools/registry.js';

// Tool contracts and the built-in tools (docs/tools.md); sandbox providers are adapters (docs/sandbox.md)
export {
  defineTool,
  contractDigest,
  checkContract,
  validateAgainstSchema,
  formatIssues,
  toolError,
  isRetryableError,
  abortError,
  type SchemaIssue,
  type SchemaValidation,
} from './tools/contract.js';
export { builtinTools } from './tools/builtins/index.js';
export { createRunScope, type DisposableRunScope } from './tools/run-scope.js';
// Tool policy: capabilities and the egress guard (docs/tools.md, "Policy")
export { hostedToolPolicy, checkToolPolicy, type ToolPolicy } from './tools/policy.js';
export { classifyAddress, createEgressGuard, METADATA_HOSTNAMES } from './tools/egress.js';
export type { AddressClass, EgressDenial, EgressGuard, EgressLookup, EgressPolicy } from './tools/egress.js';

// The Flow language and the lock file (docs/flow-language.md)
export * from './flow/index.js';
export { emptyLock, parseLock, serializeLock, sortLock, resolvePin, addPins, LOCK_FILE_NAME } from './tools/lock.js';
export type { LockEntry, LockFile, PinResolution } from './tools/lock.js';

// Packs and registries (docs/packs.md)
export {
  openRegistry,
  listRegistry,
  buildPack,
  compileDraftFlow,
  newDraft,
  parseDraft,
  readDraft,
  writeDraft,
  toExport,
  fromExport,
  publishPack,
  readPack,
  checkBuiltPack,
  verifyRegistry,
  mirrorRegistries,
  installPacks,
  parsePacksLock,
  readPacksLock,
  loadRegistryFlows,
  loadRegistryTools,
  loadRegistryPacks,
  compositeTool,
  flowRunnerFromEngine,
  DRAFT_FILE,
} from './packs/index.js';
export type {
  PackManifest,
  PackDraft,
  PacksLock,
  BuiltPack,
  LoadedPack,
  PublishResult,
  VerifyReport,
  MirrorMode,
  MirrorOptions,
  MirrorReport,
  InstallOptions,
  InstallReport,
  RegistryFlow,
  RegistryDir,
  FlowRunner,
  LoadRegistryToolsOptions,
} from './packs/index.js';

// Recordings (docs/recordings.md): used by examples/engine-launcher to build its demo Recording.
export { buildRecording, recordingToFlow, writeRecording, parseRecording, type Recording, type RecordOptions, type BuiltRecording } from './record/index.js';

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
export {
  inputsBodySchema,
  compileBodyValidator,
  REPLAY_BODY_SCHEMA,
  RUN_MODE_SCHEMA,
  RUN_ID_SCHEMA,
  SECRET_MARK,
  type BodyValidator,
  type RequestSchemaOptions,
} from './launcher/request-schemas.js';
export { HTTP_STATUS_BY_CODE } from './http/errors.js';

// MCP tools from flows (docs/mcp.md) and cron schedules (docs/schedule.md)
export { createMcpServer, META as MCP_META, type McpFlow, type McpLogLevel, type McpServerOptions } from './mcp/server.js';
export { toolInputSchema, toolOutputShape, secretInputNames, type ToolOutputShape } from './mcp/tool-schemas.js';
export { toolAnnotations, type FlowToolAnnotations } from './mcp/annotations.js';
export { createProgressFromJournal, type ProgressUpdate } from './mcp/progress.js';
export { parseCron, type CronSchedule, type ParseCronOptions } from './schedule/cron.js';
export { startScheduler, type Scheduler, type SchedulerOptions } from './schedule/scheduler.js';

// The hosted service (docs/hosted-api.md)
export { createHostedService, type HostedService, type HostedServiceOptions } from './service/hosted-service.js';
export type { StudioOptions } from './service/studio/live.js';
export type { RunLiveOptions } from './service/live/run-live.js';
export { settingsFromEnv, resolveSettings, type HostedSettings } from './service/settings.js';
export { RUN_QUEUE } from './service/domain/dispatch.js';
export type { RunWorker, RunWorkerStats } from './service/worker.js';
export { verifyAuditChain, auditDigest, type AuditChainReport } from './audit/chain.js';
export { mintApiKey, parseApiKey, hashApiKey, type KeyMode, type ParsedKey } from './service/auth/api-keys.js';
export { hashPassword, verifyPassword, needsRehash, DEFAULT_PASSWORD_PARAMS, type PasswordParams } from './service/auth/passwords.js';
export type * from './ports/service-storage.js';
