// Outbound webhooks and their deliveries, and the shared rate-limit counters.

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
