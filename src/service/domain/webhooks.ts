import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { isFlowError, type FlowError } from '../../errors.js';
import type { QueueMessage, QueueWorker } from '../../ports/queue.js';
import type { WebhookDeliveryRecord, WebhookEventType, WebhookRecord } from '../../ports/service-storage.js';
import { createEgressGuard } from '../../tools/egress.js';
import type { ServiceDeps } from '../context.js';

/**
 * Signed outbound webhooks (docs/hosted-api.md, "Webhooks"): events of an org go to its enabled
 * endpoints that subscribe to them, signed per the Standard Webhooks specification with its reference
 * library (`webhook-id`, `webhook-timestamp`, `webhook-signature`), delivered by the queue with
 * retries on a fixed schedule, every attempt in the delivery's log.
 */

export const WEBHOOK_QUEUE = 'flowctl-webhooks';
export const WEBHOOK_EVENTS: readonly WebhookEventType[] = ['run.finished', 'run.failed', 'automation.failing'];
const ATTEMPT_TIMEOUT_MS = 10_000;

/** A new signing secret: `whsec_` and 24 random bytes in base64 (the Standard Webhooks form). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The sealed secret's name in the secret box (binds the ciphertext to this endpoint). */
export const webhookSecretName = (webhookId: string): string => `webhook:${webhookId}`;

/**
 * The org's endpoints as events read them, kept per process for WEBHOOK_LIST_TTL_MS so a finished
 * run does not cost a query (most orgs have no endpoint). The webhook routes drop an org's entry on
 * every change, so this process sees a change at once; another process sees it within the TTL
 * (docs/hosted-api.md, "Webhooks"). Delivery re-reads the endpoint, so a deleted or disabled one is
 * never called.
 */
export const WEBHOOK_LIST_TTL_MS = 2000;
const MAX_CACHED_ORGS = 10_000;
const listCaches = new WeakMap<object, Map<string, { at: number; hooks: Promise<WebhookRecord[]> }>>();

function cacheOf(deps: ServiceDeps): Map<string, { at: number; hooks: Promise<WebhookRecord[]> }> {
  let cache = listCaches.get(deps.storage);
  if (!cache) listCaches.set(deps.storage, (cache = new Map()));
  return cache;
}

/** Forget the org's cached endpoints (the webhook routes call it after every change). */
export function forgetWebhooks(deps: ServiceDeps, orgId: string): void {
  cacheOf(deps).delete(orgId);
}

function webhooksOf(deps: ServiceDeps, orgId: string): Promise<WebhookRecord[]> {
  const cache = cacheOf(deps);
  const now = Date.now();
  const hit = cache.get(orgId);
  if (hit && now - hit.at < WEBHOOK_LIST_TTL_MS) return hit.hooks;
  if (cache.size >= MAX_CACHED_ORGS) cache.clear();
  const hooks = deps.storage.webhooks.list(orgId);
  const entry = { at: now, hooks };
  cache.set(orgId, entry);
  hooks.catch(() => {
    if (cache.get(orgId) === entry) cache.delete(orgId);
  });
  return hooks;
}

/**
 * Queue one delivery of `event` to each enabled endpoint of the org that subscribes to it. Never
 * throws (an event must not fail the run that caused it); without a queue nothing is delivered.
 */
export async function emitWebhookEvent(deps: ServiceDeps, orgId: string, event: WebhookEventType, data: Record<string, unknown>): Promise<void> {
  if (!deps.queue) return;
  try {
    const hooks = (await webhooksOf(deps, orgId)).filter((h) => h.enabled && h.events.includes(event));
    for (const hook of hooks) {
      const now = deps.clock.now();
      const delivery: WebhookDeliveryRecord = {
        id: `msg_${deps.ids.uuid().replaceAll('-', '')}`,
        org_id: orgId,
        webhook_id: hook.id,
        event,
        payload: JSON.stringify({ type: event, timestamp: now, data }),
        status: 'pending',
        attempts: [],
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      };
      await deps.storage.webhooks.createDelivery(delivery);
      await deps.queue.send(WEBHOOK_QUEUE, { delivery_id: delivery.id, org_id: orgId });
    }
  } catch (err) {
    deps.logger.warn(`[flowctl] [service] webhook event ${event} of org ${orgId} not queued: ${(err as Error)?.message ?? String(err)}`);
  }
}

/** The FlowError somewhere in an error's cause chain (fetch wraps the connector's error). */
const flowCause = (err: unknown): FlowError | undefined => {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    if (isFlowError(e)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
};

const describeError = (err: unknown): string => {
  const cause = (err as { cause?: unknown }).cause;
  const flow = flowCause(err);
  if (flow) return `${flow.code}: ${flow.message.replace(/^(\[[^\]]+\]\s*)+/, '')}`;
  const msg = err instanceof Error ? err.message : String(err);
  const causeMsg = cause instanceof Error ? `: ${cause.message}` : '';
  return `${msg}${causeMsg}`.slice(0, 300);
};

/** The delivery worker: one attempt per message; a failed attempt queues the next with its delay. */
export async function startWebhookWorker(deps: ServiceDeps, options: { concurrency?: number } = {}): Promise<QueueWorker> {
  const queue = deps.queue;
  if (!queue) throw new Error('[flowctl] [service] webhook delivery needs a queue');
  const schedule = deps.settings.webhookRetrySeconds;
  // Deliveries go through the hosted egress guard: public addresses, and private ones only when
  // SVC_EGRESS_ALLOW names them; every connection (and its DNS answer) is checked.
  // undici loads with the delivery worker, not with the service (an API process never delivers).
  const [{ fetch: undiciFetch }, { createGuardedAgent }] = await Promise.all([import('undici'), import('../../tools/egress-agent.js')]);
  const agent = createGuardedAgent(createEgressGuard({ allow: deps.settings.egressAllow }));

  const handle = async (message: QueueMessage): Promise<void> => {
    const { delivery_id: id, org_id: orgId } = message.data as { delivery_id?: unknown; org_id?: unknown };
    if (typeof id !== 'string' || typeof orgId !== 'string') return;
    const delivery = await deps.storage.webhooks.getDelivery(orgId, id);
    if (delivery?.status !== 'pending') return; // gone, or already settled (a redelivery)
    const hook = await deps.storage.webhooks.get(orgId, delivery.webhook_id);
    const started = Date.now();
    const at = deps.clock.now();
    if (!hook?.enabled) {
      const attempts = [
        ...delivery.attempts,
        { at, error: hook ? `endpoint disabled${hook.disabled_reason ? ` (${hook.disabled_reason})` : ''}` : 'endpoint deleted', duration_ms: 0 },
      ];
      await deps.storage.webhooks.updateDelivery(orgId, id, { status: 'failed', attempts, next_attempt_at: undefined, updated_at: at });
      return;
    }
    let status: number | undefined;
    let error: string | undefined;
    let permanent = false;
    try {
      const secret = deps.box.open(orgId, webhookSecretName(hook.id), hook.secret_ciphertext);
      const timestamp = new Date();
      const signature = new Webhook(secret).sign(delivery.id, timestamp, delivery.payload);
      const res = await undiciFetch(hook.url, {
        method: 'POST',
        body: delivery.payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'flowctl-webhooks/1',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        dispatcher: agent,
        redirect: 'manual',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (!(status >= 200 && status < 300)) error = `HTTP ${status}`;
    } catch (err) {
      error = describeError(err);
      // An address the egress guard refuses stays refused: no retry.
      permanent = flowCause(err)?.code === 'egress_denied';
    }
    const attempt = { at, ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}), duration_ms: Date.now() - started };
    const attempts = [...delivery.attempts, attempt];
    if (error === undefined) {
      await deps.storage.webhooks.updateDelivery(orgId, id, { status: 'delivered', attempts, next_attempt_at: undefined, updated_at: deps.clock.now() });
      return;
    }
    if (status === 410) {
      // Gone: the receiver asks not to be called again. The endpoint is disabled (an owner re-enables it).
      await deps.storage.webhooks.update(orgId, hook.id, { enabled: false, disabled_reason: 'the endpoint answered 410 Gone', updated_at: deps.clock.now() });
      forgetWebhooks(deps, orgId);
      await deps.storage.webhooks.updateDelivery(orgId, id, { status: 'failed', attempts, next_attempt_at: undefined, updated_at: deps.clock.now() });
      return;
    }
    const retryIn = permanent ? undefined : schedule[attempts.length - 1];
    if (retryIn === undefined) {
      await deps.storage.webhooks.updateDelivery(orgId, id, { status: 'failed', attempts, next_attempt_at: undefined, updated_at: deps.clock.now() });
      return;
    }
    const next = new Date(Date.now() + retryIn * 1000).toISOString();
    await deps.storage.webhooks.updateDelivery(orgId, id, { attempts, next_attempt_at: next, updated_at: deps.clock.now() });
    await queue.send(WEBHOOK_QUEUE, { delivery_id: id, org_id: orgId }, { delaySeconds: retryIn });
  };

  const worker = await queue.work(WEBHOOK_QUEUE, { concurrency: options.concurrency ?? 4 }, handle);
  return {
    stop: async (opts) => {
      await worker.stop(opts);
      await agent.close().catch(() => undefined);
    },
  };
}
