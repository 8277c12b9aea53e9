import type { WebhookEventType, WebhookRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { invalidRequest, serviceError } from '../errors.js';
import { audit } from './audit.js';
import { forgetWebhooks, newWebhookSecret, WEBHOOK_EVENTS, webhookSecretName } from './webhooks.js';

/**
 * An org's webhook endpoints (docs/hosted-api.md, "Webhooks"): registered, changed and deleted by
 * owners, each change audited and this process's cached list of the org's endpoints dropped. The
 * signing secret is sealed here and shown once, at creation.
 */

const MAX_WEBHOOKS_PER_ORG = 20;

/** http or https, no credentials in it (they would be logged and shown). */
function checkUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidRequest([{ path: ['url'], message: 'must be an absolute http(s) URL', code: 'invalid_url' }]);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw invalidRequest([{ path: ['url'], message: 'must be an http or https URL', code: 'invalid_url' }]);
  if (u.username || u.password)
    throw invalidRequest([{ path: ['url'], message: 'must not carry credentials; the signature authenticates the service to you', code: 'invalid_url' }]);
  u.hash = '';
  return u.toString();
}

/** The events, once each, in their canonical order. */
const uniq = (events: WebhookEventType[]) => WEBHOOK_EVENTS.filter((e) => events.includes(e));

/** Register an endpoint (409 conflict past MAX_WEBHOOKS_PER_ORG): its record and its signing secret. */
export async function createWebhook(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  body: { url: string; events?: WebhookEventType[]; description?: string },
): Promise<{ record: WebhookRecord; secret: string }> {
  const url = checkUrl(body.url);
  if ((await deps.storage.webhooks.list(orgId)).length >= MAX_WEBHOOKS_PER_ORG)
    throw serviceError('conflict', `an org has at most ${MAX_WEBHOOKS_PER_ORG} webhook endpoints`);
  const now = deps.clock.now();
  const id = `wh_${deps.ids.uuid().replaceAll('-', '')}`;
  const secret = newWebhookSecret();
  const record: WebhookRecord = {
    id,
    org_id: orgId,
    url,
    events: uniq(body.events ?? [...WEBHOOK_EVENTS]),
    description: body.description ?? '',
    enabled: true,
    secret_ciphertext: deps.box.seal(orgId, webhookSecretName(id), secret),
    created_at: now,
    updated_at: now,
  };
  await deps.storage.transaction(async (tx) => {
    await tx.webhooks.create(record);
    await audit(deps, tx, {
      org_id: orgId,
      actor,
      target: `webhook:${id}`,
      action: 'webhook.create',
      detail: { url: new URL(url).origin, events: record.events },
    });
  });
  forgetWebhooks(deps, orgId);
  return { record, secret };
}

/** Change an endpoint's url, events, description or enabled (enabling clears a 410's disabled_reason). */
export async function updateWebhook(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  id: string,
  body: { url?: string; events?: WebhookEventType[]; description?: string; enabled?: boolean },
): Promise<WebhookRecord> {
  const patch: Parameters<ServiceDeps['storage']['webhooks']['update']>[2] = { updated_at: deps.clock.now() };
  if (body.url !== undefined) patch.url = checkUrl(body.url);
  if (body.events !== undefined) patch.events = uniq(body.events);
  if (body.description !== undefined) patch.description = body.description;
  if (body.enabled !== undefined) {
    patch.enabled = body.enabled;
    if (body.enabled) patch.disabled_reason = undefined;
  }
  const updated = await deps.storage.transaction(async (tx) => {
    const w = await tx.webhooks.update(orgId, id, patch);
    if (!w) throw serviceError('not_found', 'no such webhook in this org');
    await audit(deps, tx, { org_id: orgId, actor, target: `webhook:${id}`, action: 'webhook.update', detail: { fields: Object.keys(body) } });
    return w;
  });
  forgetWebhooks(deps, orgId);
  return updated;
}

/** Delete an endpoint and its delivery log. */
export async function deleteWebhook(deps: ServiceDeps, orgId: string, actor: string, id: string): Promise<void> {
  await deps.storage.transaction(async (tx) => {
    if (!(await tx.webhooks.delete(orgId, id))) throw serviceError('not_found', 'no such webhook in this org');
    await audit(deps, tx, { org_id: orgId, actor, target: `webhook:${id}`, action: 'webhook.delete' });
  });
  forgetWebhooks(deps, orgId);
}
