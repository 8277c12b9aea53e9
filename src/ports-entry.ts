// flowctl/ports: what an adapter author needs. The port interfaces (src/ports/, docs/architecture.md
// "Ports"), the record types they carry, and the small helpers adapters share: run-list ordering for a
// RunStore, secret references for a SecretStore, the egress guard and tool errors for an Executor.
// Named exports only; each port's conformance suite is on flowctl/testing.
export type {
  SpecStore,
  DeployStore,
  RunRecord,
  RunLease,
  RunListQuery,
  RunPatch,
  RunStore,
  JournalStore,
  ArtifactStore,
  StorageFlags,
  Storage,
} from './ports/storage.js';
export type {
  Role,
  UserRecord,
  OrgRecord,
  MemberRecord,
  SessionRecord,
  ApiKeyRecord,
  AuditRecord,
  UserStore,
  OrgStore,
  MemberStore,
  SessionLookup,
  SessionStore,
  ApiKeyStore,
  AuditPage,
  AuditHead,
  AuditStore,
  AutomationStatus,
  AutomationRecord,
  AuthoringRecord,
  VersionRecord,
  SecretRecord,
  McpToolRow,
  AutomationStore,
  AuthoringStore,
  VersionStore,
  SecretStoreRecords,
  DispatchKind,
  ExecutionRecord,
  ExecutionStore,
  ScheduleRecord,
  ScheduleFireRecord,
  ScheduleStore,
  WebhookEventType,
  WebhookRecord,
  WebhookDeliveryRecord,
  WebhookStore,
  RateLimitStore,
  ServiceStores,
  EngineTransaction,
  ServiceStorage,
} from './ports/service-storage.js';
export type { SecretStore } from './ports/secrets.js';
export { SECRET_REF_PATTERN, MASK } from './ports/secrets.js';
export type { Clock, IdSource, Logger } from './ports/clock.js';
export type { Executor } from './ports/executor.js';
export type { QueueMessage, QueueTransaction, QueueSendOptions, QueueWorkOptions, QueueHandler, QueueWorker, Queue } from './ports/queue.js';
export type {
  StudioViewport,
  StudioFrame,
  StudioMouseButton,
  StudioInput,
  StudioLocator,
  StudioAction,
  StudioFileChooser,
  StudioFile,
  StudioPageHandlers,
  StudioReplayStep,
  StudioReplayOptions,
  StudioPage,
  StudioBrowser,
  RunScreencast,
  RunScreencastFrame,
} from './ports/studio.js';

// What the ports carry (also on flowctl and flowctl/engine).
export { FlowError, isFlowError } from './errors.js';
export type { Digest } from './canonical.js';
export type { FlowSpec, StepSpec, InputContract, RetryPolicy } from './flow/types.js';
export type {
  Run,
  RunStatus,
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
} from './tools/types.js';
export type { ToolPolicy } from './tools/policy.js';
export { TERMINAL_STATUSES } from './run/types.js';

// Helpers an adapter uses as the reference adapters do.
export { compareRunsNewestFirst, filterRunList } from './run/run-list.js';
export { isSecretRef, secretRefName } from './secrets/refs.js';
export { toolError, abortError, contractDigest } from './tools/contract.js';
export { createRunScope, type DisposableRunScope } from './tools/run-scope.js';
export { classifyAddress, createEgressGuard, METADATA_HOSTNAMES } from './tools/egress.js';
export type { AddressClass, EgressDenial, EgressGuard, EgressLookup, EgressPolicy } from './tools/egress.js';
