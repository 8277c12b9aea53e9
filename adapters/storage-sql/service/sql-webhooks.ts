import type { Updateable } from 'kysely';
import type { WebhookDeliveryRecord, WebhookEventType, WebhookRecord, WebhookStore } from '../../../src/ports/service-storage.js';
import { isoText, isoTextNotNull, jsonb, jsonTextNotNull, parseJson, timestamptz } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';
import type { WebhookDeliveriesTable, WebhooksTable } from './service-schema.js';

interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  events: string;
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret_ciphertext: string;
  created_at: string;
  updated_at: string;
}

interface DeliveryRow {
  id: string;
  org_id: string;
  webhook_id: string;
  event: WebhookEventType;
  payload: string;
  status: WebhookDeliveryRecord['status'];
  attempts: string;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

const toWebhook = (r: WebhookRow): WebhookRecord => ({
  id: r.id,
  org_id: r.org_id,
  url: r.url,
  events: parseJson(r.events) as WebhookEventType[],
  description: r.description,
  enabled: r.enabled,
  ...(r.disabled_reason !== null ? { disabled_reason: r.disabled_reason } : {}),
  secret_ciphertext: r.secret_ciphertext,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toDelivery = (r: DeliveryRow): WebhookDeliveryRecord => ({
  id: r.id,
  org_id: r.org_id,
  webhook_id: r.webhook_id,
  event: r.event,
  payload: r.payload,
  status: r.status,
  attempts: parseJson(r.attempts) as WebhookDeliveryRecord['attempts'],
  ...(r.next_attempt_at !== null ? { next_attempt_at: r.next_attempt_at } : {}),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** Outbound webhook endpoints and their deliveries (migration 0007_webhooks). */
export function sqlWebhookStore(ctx: ServiceContext): WebhookStore {
  const hooks = () =>
    ctx.db
      .selectFrom('svc_webhooks')
      .select([
        'id',
        'org_id',
        'url',
        jsonTextNotNull('events', 'events'),
        'description',
        'enabled',
        'disabled_reason',
        'secret_ciphertext',
        isoTextNotNull('created_at', 'created_at'),
        isoTextNotNull('updated_at', 'updated_at'),
      ]);
  const deliveries = () =>
    ctx.db
      .selectFrom('svc_webhook_deliveries')
      .select([
        'id',
        'org_id',
        'webhook_id',
        'event',
        'payload',
        'status',
        jsonTextNotNull('attempts', 'attempts'),
        isoText('next_attempt_at', 'next_attempt_at'),
        isoTextNotNull('created_at', 'created_at'),
        isoTextNotNull('updated_at', 'updated_at'),
      ]);
  const one = async (orgId: string, id: string) => {
    const row = await hooks().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row ? toWebhook(row) : undefined;
  };
  return {
    create: (w) =>
      ctx.guard('webhooks.create', async () => {
        await ctx.db
          .insertInto('svc_webhooks')
          .values({
            id: w.id,
            org_id: w.org_id,
            url: w.url,
            events: jsonb(w.events),
            description: w.description,
            enabled: w.enabled,
            disabled_reason: w.disabled_reason ?? null,
            secret_ciphertext: w.secret_ciphertext,
            created_at: timestamptz('created_at', w.created_at),
            updated_at: timestamptz('updated_at', w.updated_at),
          })
          .execute();
      }),
    get: (orgId, id) => ctx.guard('webhooks.get', () => one(orgId, id)),
    list: (orgId) =>
      ctx.guard('webhooks.list', async () => {
        const rows = await hooks().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
        return rows.map(toWebhook);
      }),
    update: (orgId, id, patch) =>
      ctx.guard('webhooks.update', async () => {
        const set: Updateable<WebhooksTable> = {};
        if (patch.url !== undefined) set.url = patch.url;
        if (patch.events !== undefined) set.events = jsonb(patch.events);
        if (patch.description !== undefined) set.description = patch.description;
        if (patch.enabled !== undefined) set.enabled = patch.enabled;
        if ('disabled_reason' in patch) set.disabled_reason = patch.disabled_reason ?? null;
        if (patch.updated_at !== undefined) set.updated_at = timestamptz('updated_at', patch.updated_at);
        if (Object.keys(set).length > 0) await ctx.db.updateTable('svc_webhooks').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
        return one(orgId, id);
      }),
    delete: (orgId, id) =>
      ctx.guard('webhooks.delete', async () => {
        const res = await ctx.db.deleteFrom('svc_webhooks').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
        return Number(res.numDeletedRows) > 0;
      }),
    createDelivery: (d) =>
      ctx.guard('webhooks.createDelivery', async () => {
        await ctx.db
          .insertInto('svc_webhook_deliveries')
          .values({
            id: d.id,
            org_id: d.org_id,
            webhook_id: d.webhook_id,
            event: d.event,
            payload: d.payload,
            status: d.status,
            attempts: jsonb(d.attempts),
            next_attempt_at: d.next_attempt_at === undefined ? null : timestamptz('next_attempt_at', d.next_attempt_at),
            created_at: timestamptz('created_at', d.created_at),
            updated_at: timestamptz('updated_at', d.updated_at),
          })
          .execute();
      }),
    getDelivery: (orgId, id) =>
      ctx.guard('webhooks.getDelivery', async () => {
        const row = await deliveries().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
        return row ? toDelivery(row) : undefined;
      }),
    updateDelivery: (orgId, id, patch) =>
      ctx.guard('webhooks.updateDelivery', async () => {
        const set: Updateable<WebhookDeliveriesTable> = {};
        if (patch.status !== undefined) set.status = patch.status;
        if (patch.attempts !== undefined) set.attempts = jsonb(patch.attempts);
        if ('next_attempt_at' in patch) {
          set.next_attempt_at = patch.next_attempt_at === undefined ? null : timestamptz('next_attempt_at', patch.next_attempt_at);
        }
        if (patch.updated_at !== undefined) set.updated_at = timestamptz('updated_at', patch.updated_at);
        if (Object.keys(set).length > 0) await ctx.db.updateTable('svc_webhook_deliveries').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
      }),
    deliveries: (orgId, webhookId, limit) =>
      ctx.guard('webhooks.deliveries', async () => {
        const rows = await deliveries()
          .where('org_id', '=', orgId)
          .where('webhook_id', '=', webhookId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limit)
          .execute();
        return rows.map(toDelivery);
      }),
  };
}
