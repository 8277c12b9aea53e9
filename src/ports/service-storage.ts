/**
 * Storage of the hosted service (spec/hosted-service.md), split by aggregate like the engine's
 * Storage. Every method may throw FlowError; codes the service relies on:
 * `conflict` (a unique value already taken: `data.field` names it), `not_found`.
 *
 * Tenancy is part of the port, not left to callers: every read or write of an org-owned record
 * takes the org id, and an adapter must never return or change a record of another org through it.
 * Timestamps are ISO-8601 UTC strings with milliseconds (`Date.prototype.toISOString()`).
 */

import type { QueueTransaction } from './queue.js';
import type { RunStore } from './storage.js';

export type Role = 'owner' | 'member';

export interface UserRecord {
  id: string;
  /** Lowercased, trimmed; unique. */
  email: string;
  /** PHC string (src/service/auth/passwords.ts). */
  password_hash: string;
  created_at: string;
}

export interface OrgRecord {
  id: string;
  name: string;
  created_at: string;
}

export interface MemberRecord {
  org_id: string;
  user_id: string;
  role: Role;
  created_at: string;
}

export interface SessionRecord {
  id: string;
  user_id: string;
  /** The active org of the session. */
  org_id: string;
  created_at: string;
  /** Absolute expiry (30 days after login); never extended. */
  expires_at: string;
  revoked_at?: string;
}

export interface ApiKeyRecord {
  id: string;
  org_id: string;
  name: string;
  mode: 'live' | 'test';
  /** Hex SHA-256 of the whole key; the plaintext is never stored. */
  hash: string;
  /** `svc_live_` plus the first 4 random characters, for display. */
  prefix: string;
  last4: string;
  /** Scope allowlist of automation names; absent: every automation of the org. */
  automations?: string[];
  created_at: string;
  created_by: string;
  last_used_at?: string;
  revoked_at?: string;
}

export interface AuditRecord {
  id: string;
  org_id: string;
  /** Position in the org's chain, from 0. */
  seq: number;
  /** User id (or `key:<id>`, `system`) who acted. */
  actor: string;
  /** What was acted on (`key:<id>`, `member:<user id>`, `org:<id>`, ...). */
  target: string;
  at: string;
  /** `action` names what happened (`key.mint`, `member.add`, ...); the rest is detail. Never a secret. */
  metadata: Record<string, unknown>;
  /** Digest of the previous entry of the org (`sha256:` of its canonical JSON), or null for the first. */
  prev: string | null;
  /** Digest of this entry's canonical JSON (all fields above but `digest`). */
  digest: string;
}

export interface UserStore {
  /** FlowError `conflict` (field `email`) when the email is taken. */
  create(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | undefined>;
  getByEmail(email: string): Promise<UserRecord | undefined>;
  setPasswordHash(id: string, hash: string): Promise<void>;
}

export interface OrgStore {
  create(org: OrgRecord): Promise<void>;
  get(id: string): Promise<OrgRecord | undefined>;
}

export interface MemberStore {
  /** FlowError `conflict` (field `user_id`) when already a member. */
  add(member: MemberRecord): Promise<void>;
  get(orgId: string, userId: string): Promise<MemberRecord | undefined>;
  /** With each member's email, oldest first. */
  list(orgId: string): Promise<(MemberRecord & { email: string })[]>;
  /** Orgs of a user with their names and the user's role, oldest membership first. */
  orgsOf(userId: string): Promise<{ org: OrgRecord; role: Role }[]>;
  /**
   * Change a role or remove a member, refusing (FlowError `last_owner`) when the org would keep no
   * owner. The check and the write are atomic: two concurrent demotions of the last two owners
   * cannot both succeed. Returns the updated member, or undefined when not a member.
   */
  setRole(orgId: string, userId: string, role: Role): Promise<MemberRecord | undefined>;
  /** True when removed; FlowError `last_owner` as for setRole. */
  remove(orgId: string, userId: string): Promise<boolean>;
}

/** A session with what every authenticated request needs, read in one round trip. */
export interface SessionLookup {
  session: SessionRecord;
  user: { id: string; email: string };
  org: OrgRecord;
  /** The user's role in the session's org; undefined when no longer a member. */
  role?: Role;
  /** Every org of the user with their role, oldest membership first. */
  orgs: { org: OrgRecord; role: Role }[];
}

export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  get(id: string): Promise<SessionRecord | undefined>;
  /** The session, its user, its active org and the user's role there (one query). */
  lookup(id: string): Promise<SessionLookup | undefined>;
  setOrg(id: string, orgId: string): Promise<void>;
  revoke(id: string, at: string): Promise<void>;
  /** Revoke every live session of a user whose active org is `orgId` (member removed). */
  revokeForMember(orgId: string, userId: string, at: string): Promise<number>;
}

export interface ApiKeyStore {
  /** FlowError `conflict` (field `hash`) when the hash exists (a key minted twice). */
  create(key: ApiKeyRecord): Promise<void>;
  getByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** The key by hash with its org, in one read (the bearer check of every gateway and MCP request). */
  getWithOrgByHash(hash: string): Promise<{ key: ApiKeyRecord; org: OrgRecord } | undefined>;
  /** Every key of the org, revoked ones included, newest first. */
  list(orgId: string): Promise<ApiKeyRecord[]>;
  /** True when a live key of the org was revoked now. */
  revoke(orgId: string, id: string, at: string): Promise<boolean>;
  /** Record a use; adapters may skip the write when the stored value is recent (see `touchAfterMs`). */
  touch(id: string, at: string): Promise<void>;
}

export interface AuditPage {
  entries: AuditRecord[];
  /** Seq to pass as `beforeSeq` for the next (older) page, or undefined on the last page. */
  nextBeforeSeq?: number;
}

/** An org's newest audit entry: the next entry goes at `seq + 1` and chains to `digest`. */
export interface AuditHead {
  seq: number;
  digest: string;
}

/**
 * The audit log's storage. The chain itself is the core's (src/audit/chain.ts), as the journal's
 * is: the core reads the head, seals the next entry (seq, prev, digest) and appends it at the
 * position it sealed it for; the store only keeps the chain from forking.
 */
export interface AuditStore {
  /** The org's newest entry (its seq and digest), or undefined when the org has none. */
  head(orgId: string): Promise<AuditHead | undefined>;
  /**
   * Store a sealed entry as entry `expectedSeq` of its org's chain (`entry.seq` must equal it): only
   * when the chain has exactly `expectedSeq` entries, atomically with respect to other appends of the
   * org. Otherwise FlowError `audit_conflict` (`data`: `org_id`, `seq`, `length`): another writer
   * appended first, and the caller seals against the new head and tries again (`appendAuditEntry`).
   * Never two entries at one seq, never a gap.
   */
  append(entry: AuditRecord, expectedSeq: number): Promise<void>;
  /** Newest first, at most `limit`, only entries with seq < beforeSeq when given. */
  page(orgId: string, options: { limit: number; beforeSeq?: number }): Promise<AuditPage>;
  /** Every entry of the org, oldest first (for verifying the chain). */
  all(orgId: string): Promise<AuditRecord[]>;
}

export type AutomationStatus = 'draft' | 'published' | 'failing';

export interface AutomationRecord {
  id: string;
  org_id: string;
  /** Unique per org; `^[a-z0-9][a-z0-9-]*$`, 1-64 characters. */
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: string;
  status: AutomationStatus;
  live_digest?: string;
  needs_attention: boolean;
  /** Step id of the drifted step, while failing. */
  failing_step?: string;
  /** The org's starter example (at most one per org). */
  example: boolean;
  /** Params given at creation (`{name, required?, sample?}`), kept for the authoring session. */
  params: unknown[];
}

export interface AuthoringRecord {
  /** One session per automation: keyed by the automation id. */
  automation_id: string;
  org_id: string;
  captured_ops: unknown[];
  input_params: { name: string; required: boolean; sample: string }[];
  input_slots: string[];
  secret_slots: string[];
  /** Upload files of the capture by name: `{name, digest, media_type}`; bytes are in the files table. */
  files: { name: string; digest: string; size: number }[];
  updated_at: string;
  /** The last compile or publish problem, in words. */
  error?: string;
  /** `editing` until published; `published` until reopened with edit. */
  state: 'editing' | 'published';
}

export interface VersionRecord {
  automation_id: string;
  org_id: string;
  flow_digest: string;
  created_at: string;
  created_by: string;
}

export interface SecretRecord {
  org_id: string;
  name: string;
  /** `v1.<key id>.<iv>.<tag>.<ciphertext>` (src/service/secret-box.ts); never the value. */
  ciphertext: string;
  updated_at: string;
}

/** An automation offered as an MCP tool (AutomationStore.listMcpTools). */
export interface McpToolRow {
  id: string;
  name: string;
  task: string;
  live_digest: string;
}

export interface AutomationStore {
  /** FlowError `conflict` (field `name`) when the org has the name. */
  create(automation: AutomationRecord): Promise<void>;
  get(orgId: string, id: string): Promise<AutomationRecord | undefined>;
  getByName(orgId: string, name: string): Promise<AutomationRecord | undefined>;
  /** The org's starter example, if created. */
  getExample(orgId: string): Promise<AutomationRecord | undefined>;
  /** Oldest first. */
  list(orgId: string): Promise<AutomationRecord[]>;
  /**
   * The automations the hosted MCP endpoint offers as tools, oldest first: not a draft, with a live
   * digest, `mcp_enabled` true; only the fields a tool is made of (tools/list reads this on every
   * request, so it stays narrow: docs/mcp.md, "Hosted").
   */
  listMcpTools(orgId: string): Promise<McpToolRow[]>;
  /**
   * A digest of exactly what `listMcpTools(orgId)` would return now (fields and order): equal
   * digests mean equal lists. Cheaper than the list itself, so tools/list can keep the rows and ask
   * only this on every request.
   */
  mcpToolsFingerprint(orgId: string): Promise<string>;
  /** Change the given fields; returns the updated record, or undefined when not in the org. */
  update(
    orgId: string,
    id: string,
    patch: Partial<Pick<AutomationRecord, 'task' | 'site' | 'mcp_enabled' | 'status' | 'live_digest' | 'needs_attention' | 'failing_step'>>,
  ): Promise<AutomationRecord | undefined>;
}

export interface AuthoringStore {
  create(session: AuthoringRecord): Promise<void>;
  get(orgId: string, automationId: string): Promise<AuthoringRecord | undefined>;
  /** Replace the given fields; returns the updated record. */
  update(
    orgId: string,
    automationId: string,
    patch: Partial<Omit<AuthoringRecord, 'automation_id' | 'org_id' | 'error'>> & { error?: string | null },
  ): Promise<AuthoringRecord | undefined>;
  /**
   * Attach an upload file to a capture under `name` (replacing that name's earlier file). The bytes go
   * to the org's content-addressed files, by `digest` (the sha256 of the bytes, `sha256:<hex>`), where
   * they stay: a published version keeps reading them by digest after the name is reused.
   */
  putFile(orgId: string, automationId: string, file: { name: string; digest: string; bytes: Uint8Array }): Promise<void>;
  /** The file a capture holds under `name` now. */
  getFile(orgId: string, automationId: string, name: string): Promise<{ digest: string; bytes: Uint8Array } | undefined>;
  /** An upload file of the org by digest (what runs of its published versions read); never another org's. */
  fileByDigest(orgId: string, digest: string): Promise<Uint8Array | undefined>;
}

export interface VersionStore {
  /** Record a publish; publishing a digest the automation already had keeps its first row. */
  add(version: VersionRecord): Promise<void>;
  /** Newest first. */
  list(orgId: string, automationId: string): Promise<VersionRecord[]>;
  get(orgId: string, automationId: string, digest: string): Promise<VersionRecord | undefined>;
}

export interface SecretStoreRecords {
  /** Insert or replace. */
  put(secret: SecretRecord): Promise<void>;
  get(orgId: string, name: string): Promise<SecretRecord | undefined>;
  /** Names and times, sorted by name (ciphertexts included for re-encryption and leak checks). */
  list(orgId: string): Promise<SecretRecord[]>;
  /** True when it existed. */
  delete(orgId: string, name: string): Promise<boolean>;
}

/** How a run was dispatched: a gateway call run in the request (`sync`) or queued to a worker (`queue`), a schedule fire, an MCP tools/call. */
export type DispatchKind = 'sync' | 'queue' | 'schedule' | 'mcp';

/**
 * A row of the executions index (a run_ref): it references an engine run and never copies it; the
 * run and its journal are read from the engine on fetch.
 */
export interface ExecutionRecord {
  /** The run_ref id, distinct from the engine run id. */
  id: string;
  org_id: string;
  automation_id: string;
  /** The automation name at dispatch. */
  flow: string;
  run_id: string;
  flow_digest: string;
  dispatch: DispatchKind;
  /** The API key that called, for gateway and MCP dispatches. */
  key_id?: string;
  /** Copied from the engine run when it ends (for listing); the engine run is the source. */
  status: 'queued' | 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled';
  created_at: string;
  finished_at?: string;
  /** The failing step's error code, when failed. */
  error_code?: string;
}

export interface ExecutionStore {
  create(execution: ExecutionRecord): Promise<void>;
  update(orgId: string, id: string, patch: Partial<Pick<ExecutionRecord, 'status' | 'finished_at' | 'error_code'>>): Promise<void>;
  /**
   * Record the terminal outcome once: true for the call that moved the row from a non-terminal status
   * to `patch.status`; false when it was already terminal (the row keeps its outcome) or not in the org.
   */
  finish(orgId: string, id: string, patch: { status: 'succeeded' | 'failed' | 'canceled'; finished_at?: string; error_code?: string }): Promise<boolean>;
  get(orgId: string, id: string): Promise<ExecutionRecord | undefined>;
  getByRunId(orgId: string, runId: string): Promise<ExecutionRecord | undefined>;
  /** Newest first (created_at, id); `before` is the (created_at, id) of the last row of the previous page. */
  list(orgId: string, query: { limit: number; before?: { created_at: string; id: string }; flow?: string }): Promise<ExecutionRecord[]>;
  /** Per automation of the org: runs since `since`, and the newest run's time. */
  usage(orgId: string, since: string): Promise<Map<string, { calls: number; last_run_at: string }>>;
  /**
   * Across every org, for the service's reconcile sweep: rows still `queued` or `running` created
   * before `createdBefore`, oldest first (created_at, id); `after` is the (created_at, id) of the
   * last row of the previous page.
   */
  listUnfinished(query: { createdBefore: string; limit: number; after?: { created_at: string; id: string } }): Promise<ExecutionRecord[]>;
}

/**
 * A cron schedule of an automation (docs/hosted-api.md, "Schedules"). It runs the version it
 * recorded (`flow_digest`) with fixed inputs checked against that version's FlowSpec.
 */
export interface ScheduleRecord {
  id: string;
  org_id: string;
  automation_id: string;
  /** 5 fields, or 6 with leading seconds (validated by the service). */
  cron: string;
  /** IANA time zone the cron is read in; absent: UTC. */
  timezone?: string;
  flow_digest: string;
  inputs: Record<string, unknown>;
  enabled: boolean;
  created_at: string;
  created_by: string;
  updated_at: string;
  /**
   * Fire times at or before this instant never fire: creation, re-enabling and a cron or time zone
   * change move it to now, so none of them fires a time that passed before it.
   */
  since: string;
}

/** A claimed fire of a schedule: one row per (schedule_id, fire_at), whatever the process count. */
export interface ScheduleFireRecord {
  schedule_id: string;
  org_id: string;
  /** The cron time this fire is for (not when it ran). */
  fire_at: string;
  claimed_at: string;
  /** The process (scheduler instance) that won the claim. */
  claimed_by: string;
  /** The run_ref of the dispatched run, once dispatched. */
  execution_id?: string;
  /** Why the fire dispatched nothing (automation gone or draft, version missing, inputs refused). */
  error?: string;
}

export interface ScheduleStore {
  create(schedule: ScheduleRecord): Promise<void>;
  get(orgId: string, id: string): Promise<ScheduleRecord | undefined>;
  /** The automation's schedules, oldest first. */
  list(orgId: string, automationId: string): Promise<ScheduleRecord[]>;
  /** Change the given fields; returns the updated record, or undefined when not in the org. */
  update(
    orgId: string,
    id: string,
    patch: Partial<Pick<ScheduleRecord, 'cron' | 'timezone' | 'inputs' | 'enabled' | 'flow_digest' | 'updated_at' | 'since'>>,
  ): Promise<ScheduleRecord | undefined>;
  /** True when it existed; its fire rows go with it. */
  delete(orgId: string, id: string): Promise<boolean>;
  /**
   * Enabled schedules of every org, oldest first, at most `limit`: the scheduler's read (a system
   * read that no route reaches; every write it leads to names the schedule's own org).
   */
  listEnabled(limit: number): Promise<ScheduleRecord[]>;
  /**
   * Claim one fire: true for exactly one caller per (schedule_id, fire_at) across every process and
   * connection (a unique key in the database), false for all others and when the schedule no longer
   * exists in that org.
   */
  claimFire(fire: Omit<ScheduleFireRecord, 'execution_id' | 'error'>): Promise<boolean>;
  /** Record what a claimed fire dispatched. */
  completeFire(orgId: string, scheduleId: string, fireAt: string, outcome: { execution_id?: string; error?: string }): Promise<void>;
  /** The schedule's fires, newest first, at most `limit`. */
  fires(orgId: string, scheduleId: string, limit: number): Promise<ScheduleFireRecord[]>;
}

/** Event types of outbound webhooks (docs/hosted-api.md, "Webhooks"). */
export type WebhookEventType = 'run.finished' | 'run.failed' | 'automation.failing';

/** An org's webhook endpoint. Its signing secret is stored sealed (AES-256-GCM), never in plain. */
export interface WebhookRecord {
  id: string;
  org_id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  enabled: boolean;
  /** Why the service disabled it (an endpoint that answered 410 Gone). */
  disabled_reason?: string;
  /** The sealed `whsec_...` signing secret. */
  secret_ciphertext: string;
  created_at: string;
  updated_at: string;
}

/** One event sent to one endpoint, with every attempt. */
export interface WebhookDeliveryRecord {
  id: string;
  org_id: string;
  webhook_id: string;
  event: WebhookEventType;
  /** The JSON body sent (the same bytes on every attempt). */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: { at: string; status?: number; error?: string; duration_ms: number }[];
  /** When the next attempt is due (pending only). */
  next_attempt_at?: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookStore {
  create(webhook: WebhookRecord): Promise<void>;
  get(orgId: string, id: string): Promise<WebhookRecord | undefined>;
  /** The org's endpoints, oldest first. */
  list(orgId: string): Promise<WebhookRecord[]>;
  update(
    orgId: string,
    id: string,
    patch: Partial<Pick<WebhookRecord, 'url' | 'events' | 'description' | 'enabled' | 'disabled_reason' | 'updated_at'>>,
  ): Promise<WebhookRecord | undefined>;
  /** True when it existed; its deliveries go with it. */
  delete(orgId: string, id: string): Promise<boolean>;
  createDelivery(delivery: WebhookDeliveryRecord): Promise<void>;
  getDelivery(orgId: string, id: string): Promise<WebhookDeliveryRecord | undefined>;
  updateDelivery(
    orgId: string,
    id: string,
    patch: Partial<Pick<WebhookDeliveryRecord, 'status' | 'attempts' | 'next_attempt_at' | 'updated_at'>>,
  ): Promise<void>;
  /** The endpoint's deliveries, newest first, at most `limit`. */
  deliveries(orgId: string, webhookId: string, limit: number): Promise<WebhookDeliveryRecord[]>;
}

/**
 * A store shared by every process of the database for rate-limiter-flexible's RateLimiterPostgres
 * (`storeType: 'pool'`): a client with pg's `query({text, values, name?})`, and the table (created by
 * the service migrations, with the library's columns `key`, `points`, `expire`). Given only where
 * several processes can share the database (Postgres); absent on PGlite (one process).
 */
export interface RateLimitStore {
  client: { query(q: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: any[] }> };
  tableName: string;
  schemaName?: string;
}

/** The stores, as one object: the storage itself, or a view bound to one transaction. */
export interface ServiceStores {
  users: UserStore;
  orgs: OrgStore;
  members: MemberStore;
  sessions: SessionStore;
  apiKeys: ApiKeyStore;
  audit: AuditStore;
  automations: AutomationStore;
  authoring: AuthoringStore;
  versions: VersionStore;
  secrets: SecretStoreRecords;
  executions: ExecutionStore;
  schedules: ScheduleStore;
  webhooks: WebhookStore;
}

/**
 * One transaction over the service's stores and the engine's run store (both on one database), and
 * its connection for an adapter keeping its tables there (the queue, `QueueSendOptions.transaction`).
 */
export interface EngineTransaction extends ServiceStores {
  /** The engine's run records, in this transaction (a prepared run: `Engine.prepare`'s `store`). */
  engineRuns: Pick<RunStore, 'create'>;
  sql: QueueTransaction;
}

export interface ServiceStorage extends ServiceStores {
  readonly name: string;
  /** Rate limit counters shared by every process (Postgres); absent: each process counts alone. */
  readonly rateLimitStore?: RateLimitStore;
  /**
   * Run `fn` with stores bound to one transaction: all of its writes commit together when it
   * resolves, none when it throws. Calls inside `fn` must use the stores passed to it.
   */
  transaction<T>(fn: (tx: ServiceStores) => Promise<T>): Promise<T>;
  /**
   * Run `fn` in one transaction that also holds the engine's run store and the raw connection
   * (queue dispatch writes a prepared run, its execution row and its queue message in it: all or
   * nothing). Present when the service and the engine share one SQL database. Inside `fn`, use `tx`
   * only: the engine's storage refuses calls from it (`transaction_in_progress`).
   */
  engineTransaction?<T>(fn: (tx: EngineTransaction) => Promise<T>): Promise<T>;
  /** Whether the database answers and the schema is migrated (readiness). */
  ready(): Promise<boolean>;
  /** Called once before first use (migrations). */
  init(): Promise<void>;
  dispose(): Promise<void>;
}
