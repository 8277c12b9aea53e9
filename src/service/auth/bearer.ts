import type { MiddlewareHandler } from 'hono';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ServiceDeps, ServiceEnv } from '../context.js';
import { serviceError } from '../errors.js';
import { hashApiKey, parseApiKey } from './api-keys.js';
import { clientIp } from './guards.js';

/**
 * The bearer routes' checks, in the spec's order (docs/hosted-api.md, "Bearer API key"): the
 * pre-authentication IP limit, the key (format, checksum, lookup by hash, revocation), its org, then
 * the per-org limit. Sets `c.var.key`.
 */

async function consume(limiter: RateLimiterAbstract, key: string, limit: number): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (res) {
    if (res instanceof RateLimiterRes) {
      const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw serviceError('rate_limited', `too many requests; retry in ${retry} s`, { retry_after: retry, limit });
    }
    throw res;
  }
}

const invalidKey = () => serviceError('invalid_key', 'send a valid API key: Authorization: Bearer svc_live_... (or svc_test_...)');

export function requireKey(deps: ServiceDeps): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    // Already checked before the body was read (hosted-service.ts): not counted twice.
    if (c.get('key') !== undefined) return next();
    await consume(deps.limiters.ip, clientIp(c, deps), deps.settings.ipLimitPerMinute);
    const header = c.req.header('authorization') ?? '';
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
    const key = m?.[1];
    if (!key || !parseApiKey(key)) throw invalidKey();
    // The key and its org in one read; a revoked key, or one whose org is gone, is the same 401.
    const found = await deps.storage.apiKeys.getWithOrgByHash(hashApiKey(key));
    if (!found || found.key.revoked_at !== undefined) throw invalidKey();
    const { key: record, org } = found;
    await consume(deps.limiters.org, org.id, deps.settings.orgLimitPerMinute);
    c.set('key', { record, org });
    // last_used_at is kept to the minute (the store's own rule too): no write while the one read is recent.
    const now = deps.clock.now();
    if (record.last_used_at === undefined || !(Date.parse(now) - Date.parse(record.last_used_at) < 60_000)) await deps.storage.apiKeys.touch(record.id, now);
    await next();
  };
}
