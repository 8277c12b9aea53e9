import { z } from '@hono/zod-openapi';
import type { WebhookDeliveryRecord, WebhookEventType, WebhookRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { createWebhook, deleteWebhook, updateWebhook } from '../domain/webhook-endpoints.js';
import { WEBHOOK_EVENTS } from '../domain/webhooks.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { IdParam } from '../schemas.js';

/**
 * Outbound webhook endpoints of an org (docs/hosted-api.md, "Webhooks"; beyond the spec, in the
 * style of HOSTED-API.md): owners register, change, delete and inspect them; the signing secret is
 * shown once, at creation.
 */

const Event = z.enum(WEBHOOK_EVENTS as [WebhookEventType, ...WebhookEventType[]]);
const Url = z.string().min(1).max(2048).openapi({ example: 'https://hooks.example.com/flowctl' });
const CreateBody = z
  .object({
    url: Url,
    events: z.array(Event).min(1).max(WEBHOOK_EVENTS.length).optional().openapi({ description: 'Default: every event' }),
    description: z.string().max(500).optional(),
  })
  .openapi('CreateWebhookBody');
const PatchBody = z
  .object({
    url: Url.optional(),
    events: z.array(Event).min(1).max(WEBHOOK_EVENTS.length).optional(),
    description: z.string().max(500).optional(),
    enabled: z.boolean().optional(),
  })
  .openapi('PatchWebhookBody');
const LimitQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional() });

const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(Event),
    description: z.string(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Webhook');
const Delivery = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event: Event,
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.array(z.object({ at: z.string(), status: z.number().optional(), error: z.string().optional(), duration_ms: z.number() })),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    payload: z.unknown(),
  })
  .openapi('WebhookDelivery');

const publicWebhook = (w: WebhookRecord) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  enabled: w.enabled,
  disabled_reason: w.disabled_reason ?? null,
  created_at: w.created_at,
  updated_at: w.updated_at,
});
const publicDelivery = (d: WebhookDeliveryRecord) => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.next_attempt_at ?? null,
  created_at: d.created_at,
  payload: JSON.parse(d.payload) as unknown,
});

export function webhookRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/webhooks',
        auth: 'owner',
        summary: 'Register a webhook endpoint; the signing secret (whsec_...) is in this answer only',
        tags: ['webhooks'],
        request: jsonBody(CreateBody),
        responses: {
          201: jsonResponse('The endpoint and its signing secret, shown once', z.object({ webhook: Webhook, secret: z.string() })),
          409: jsonResponse('`conflict`: the org has the most endpoints allowed (20)', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { org, user } = c.get('auth');
        const { record, secret } = await createWebhook(deps, org.id, user.id, c.req.valid('json'));
        return c.json({ webhook: publicWebhook(record), secret }, 201);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/webhooks',
        auth: 'owner',
        summary: "The org's webhook endpoints (never their secrets)",
        tags: ['webhooks'],
        responses: { 200: jsonResponse('Endpoints', z.object({ webhooks: z.array(Webhook) })) },
      },
      async (c) => c.json({ webhooks: (await storage.webhooks.list(c.get('auth').org.id)).map(publicWebhook) }, 200),
    ),
    defineRoute(
      {
        method: 'patch',
        path: '/api/webhooks/{id}',
        auth: 'owner',
        summary: 'Change an endpoint: url, events, description, enabled (re-enables one disabled by a 410)',
        tags: ['webhooks'],
        request: { params: IdParam, ...jsonBody(PatchBody) },
        responses: {
          200: jsonResponse('The endpoint', z.object({ webhook: Webhook })),
          404: jsonResponse('`not_found`', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const { org, user } = c.get('auth');
        const updated = await updateWebhook(deps, org.id, user.id, id, body);
        return c.json({ webhook: publicWebhook(updated) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/webhooks/{id}',
        auth: 'owner',
        summary: 'Delete an endpoint and its delivery log',
        tags: ['webhooks'],
        request: { params: IdParam },
        responses: { 204: { description: 'Deleted' }, 404: jsonResponse('`not_found`', z.object({ error: z.string(), message: z.string() })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org, user } = c.get('auth');
        await deleteWebhook(deps, org.id, user.id, id);
        return c.body(null, 204);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/webhooks/{id}/deliveries',
        auth: 'owner',
        summary: "The endpoint's delivery log, newest first: each delivery with every attempt",
        tags: ['webhooks'],
        request: { params: IdParam, query: LimitQuery },
        responses: {
          200: jsonResponse('Deliveries', z.object({ deliveries: z.array(Delivery) })),
          404: jsonResponse('`not_found`', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { limit } = c.req.valid('query');
        const { org } = c.get('auth');
        if (!(await storage.webhooks.get(org.id, id))) throw serviceError('not_found', 'no such webhook in this org');
        return c.json({ deliveries: (await storage.webhooks.deliveries(org.id, id, limit ?? 50)).map(publicDelivery) }, 200);
      },
    ),
  ];
}
