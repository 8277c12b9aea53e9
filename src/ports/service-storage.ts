/**
 * Storage of the hosted service (spec/hosted-service.md), split by aggregate like the engine's
 * Storage. Every method may throw FlowError; codes the service relies on:
 * `conflict` (a unique value already taken: `data.field` names it), `not_found`.
 *
 * Tenancy is part of the port, not left to callers: every read or write of an org-owned record
 * takes the org id, and an adapter must never return or change a record of another org through it.
 * Timestamps are ISO-8601 UTC strings with milliseconds (`Date.prototype.toISOString()`).
 */
/*
 * The port's records and stores are one file per family under service-storage/; this module is the
 * port's entry (as src/ports/index.ts is for the others): the aggregate interfaces, and every
 * family's types under the one name the service and the adapters import.
 */

import type { QueueTransaction } from './queue.js';
import type { ApiKeyStore, MemberStore, OrgStore, SessionStore, UserStore } from './service-storage/accounts.js';
import type { AuditStore } from './service-storage/audit.js';
import type { AuthoringStore, AutomationStore, SecretStoreRecords, VersionStore } from './service-storage/automations.js';
import type { ExecutionStore } from './service-storage/executions.js';
import type { OAuthStore } from './service-storage/oauth.js';
import type { ScheduleStore } from './service-storage/schedules.js';
import type { RateLimitStore, WebhookStore } from './service-storage/webhooks.js';
import type { RunStore } from './storage.js';

export type * from './service-storage/accounts.js';
export type * from './service-storage/audit.js';
export type * from './service-storage/automations.js';
export type * from './service-storage/executions.js';
export type * from './service-storage/oauth.js';
export type * from './service-storage/schedules.js';
export type * from './service-storage/webhooks.js';

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
  /** OAuth 2.1 for the hosted MCP endpoint: the server library's records, the grants, the server's keys. */
  oauth: OAuthStore;
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
