import type { ColumnType, RawBuilder } from 'kysely';
import type {
  ApiKeyRecord,
  AuthoringRecord,
  AutomationStatus,
  DispatchKind,
  ExecutionRecord,
  Role,
  WebhookDeliveryRecord,
  WebhookEventType,
} from '../../../src/ports/service-storage.js';
import type { Jsonb, JsonbOrNull, Timestamptz, TimestamptzOrNull } from '../schema.js';

/**
 * The hosted service's tables, as kysely sees them (typed queries, no code generation), beside the
 * engine's (../schema.ts). The DDL that creates them is in the service migrations
 * (service-migrations.ts and its parts); docs/hosted-api.md, "Storage", lists them.
 *
 * Columns follow the engine schema's conventions: JSON is `jsonb`, written from our own text and read
 * back as text (sql-values.ts `jsonText`); timestamps are written as ISO strings cast to
 * timestamptz and read back through `to_char` (`isoText`). A text column the DDL restricts with a
 * check (a role, a status) is typed with the values the check allows.
 */

/** Upload bytes: written as base64 decoded by the database, read back encoded (sql-authoring.ts). */
type Bytea = ColumnType<unknown, RawBuilder<Uint8Array>, never>;

export interface UsersTable {
  id: string;
  email: string;
  password_hash: string;
  created_at: Timestamptz;
}

export interface OrgsTable {
  id: string;
  name: string;
  created_at: Timestamptz;
}

export interface MembersTable {
  org_id: string;
  user_id: string;
  role: Role;
  created_at: Timestamptz;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  org_id: string;
  created_at: Timestamptz;
  expires_at: Timestamptz;
  revoked_at: TimestamptzOrNull;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string;
  mode: ApiKeyRecord['mode'];
  hash: string;
  prefix: string;
  last4: string;
  automations: JsonbOrNull;
  created_at: Timestamptz;
  created_by: string;
  last_used_at: TimestamptzOrNull;
  revoked_at: TimestamptzOrNull;
}

export interface AuditTable {
  id: string;
  org_id: string;
  seq: number;
  actor: string;
  target: string;
  at: Timestamptz;
  metadata: Jsonb;
  prev: string | null;
  digest: string;
}

export interface AutomationsTable {
  id: string;
  org_id: string;
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: Timestamptz;
  status: AutomationStatus;
  live_digest: string | null;
  needs_attention: boolean;
  failing_step: string | null;
  example: boolean;
  params: Jsonb;
}

export interface AuthoringTable {
  automation_id: string;
  org_id: string;
  captured_ops: Jsonb;
  input_params: Jsonb;
  input_slots: Jsonb;
  secret_slots: Jsonb;
  files: Jsonb;
  updated_at: Timestamptz;
  error: string | null;
  state: AuthoringRecord['state'];
}

/** A capture's upload files by name: name -> digest (the bytes are in svc_files, migration 0009). */
export interface AuthoringFilesTable {
  automation_id: string;
  org_id: string;
  name: string;
  digest: string;
}

/** An org's upload file bytes by digest, written once. */
export interface FilesTable {
  org_id: string;
  digest: string;
  bytes: Bytea;
}

export interface VersionsTable {
  automation_id: string;
  org_id: string;
  flow_digest: string;
  created_at: Timestamptz;
  created_by: string;
}

export interface SecretsTable {
  org_id: string;
  name: string;
  ciphertext: string;
  updated_at: Timestamptz;
}

export interface ExecutionsTable {
  id: string;
  org_id: string;
  automation_id: string;
  flow: string;
  run_id: string;
  flow_digest: string;
  dispatch: DispatchKind;
  key_id: string | null;
  status: ExecutionRecord['status'];
  created_at: Timestamptz;
  finished_at: TimestamptzOrNull;
  error_code: string | null;
}

export interface SchedulesTable {
  id: string;
  org_id: string;
  automation_id: string;
  cron: string;
  timezone: string | null;
  flow_digest: string;
  inputs: Jsonb;
  enabled: boolean;
  created_at: Timestamptz;
  created_by: string;
  updated_at: Timestamptz;
  since: Timestamptz;
}

export interface ScheduleFiresTable {
  schedule_id: string;
  org_id: string;
  fire_at: Timestamptz;
  claimed_at: Timestamptz;
  claimed_by: string;
  execution_id: string | null;
  error: string | null;
}

/** rate-limiter-flexible's table (its own queries; listed for completeness). */
export interface RateLimitsTable {
  key: string;
  points: number;
  expire: string | null;
}

export interface WebhooksTable {
  id: string;
  org_id: string;
  url: string;
  events: Jsonb;
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret_ciphertext: string;
  created_at: Timestamptz;
  updated_at: Timestamptz;
}

export interface WebhookDeliveriesTable {
  id: string;
  org_id: string;
  webhook_id: string;
  event: WebhookEventType;
  payload: string;
  status: WebhookDeliveryRecord['status'];
  attempts: Jsonb;
  next_attempt_at: TimestamptzOrNull;
  created_at: Timestamptz;
  updated_at: Timestamptz;
}

/** A type (not an interface) so kysely's `$extendTables` takes it. */
export type ServiceDatabase = {
  svc_users: UsersTable;
  svc_orgs: OrgsTable;
  svc_members: MembersTable;
  svc_sessions: SessionsTable;
  svc_api_keys: ApiKeysTable;
  svc_audit: AuditTable;
  svc_automations: AutomationsTable;
  svc_authoring: AuthoringTable;
  svc_authoring_files: AuthoringFilesTable;
  svc_files: FilesTable;
  svc_versions: VersionsTable;
  svc_secrets: SecretsTable;
  svc_executions: ExecutionsTable;
  svc_schedules: SchedulesTable;
  svc_schedule_fires: ScheduleFiresTable;
  svc_rate_limits: RateLimitsTable;
  svc_webhooks: WebhooksTable;
  svc_webhook_deliveries: WebhookDeliveriesTable;
  svc_oauth_models: OAuthModelsTable;
  svc_oauth_grants: OAuthGrantsTable;
  svc_oauth_secrets: { name: string; value: string };
};

export interface OAuthModelsTable {
  model: string;
  key: string;
  payload: string;
  grant_hash: string | null;
  uid: string | null;
  user_code: string | null;
  expires_at: Timestamptz;
  consumed_at: TimestamptzOrNull;
}

export interface OAuthGrantsTable {
  id: string;
  org_id: string;
  grant_hash: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  mode: 'live' | 'test';
  automations: JsonbOrNull;
  created_at: Timestamptz;
  created_by: string;
  last_used_at: TimestamptzOrNull;
  revoked_at: TimestamptzOrNull;
}
