import type { MiddlewareHandler } from 'hono';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ServiceDeps, ServiceEnv } from '../context.js';
import { serviceError } from '../errors.js';
import { hashApiKey, parseApiKey } from './api-keys.js';
import { clientIp } from './guards.js';
import { oauthUrls } from '../oauth/provider.js';

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

/**
 * The /mcp variant's 401: the same `invalid_key` body, with the RFC 9728 challenge MCP clients start
 * OAuth from (docs/mcp.md, "Hosted"): `error="invalid_token"` when a credential was sent.
 */
function invalidCredential(deps: ServiceDeps, sent: boolean) {
  const { resourceMetadata } = oauthUrls(deps.settings.publicUrl);
  const challenge = `Bearer resource_metadata="${resourceMetadata}", scope="mcp"${sent ? ', error="invalid_token", error_description="the API key or access token is invalid, expired or revoked"' : ''}`;
  return serviceError('invalid_key', 'send a valid API key (Authorization: Bearer svc_live_... or svc_test_...) or an OAuth access token for this resource', {
    www_authenticate: challenge,
  });
}

/**
 * `oauth`: also accept an OAuth access token bound to the /mcp resource (src/service/oauth/server.ts),
 * resolved to the same principal as a key (org, mode, automations).
 */
export function requireKey(deps: ServiceDeps, options: { oauth?: boolean } = {}): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    // Already checked before the body was read (hosted-service.ts): not counted twice.
    if (c.get('key') !== undefined) return next();
    await consume(deps.limiters.ip, clientIp(c, deps), deps.settings.ipLimitPerMinute);
    const header = c.req.header('authorization') ?? '';
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
    const key = m?.[1];
    if (options.oauth && (!key || !parseApiKey(key))) {
      const principal = key ? await deps.oauth.authenticate(key) : undefined;
      if (!principal) throw invalidCredential(deps, header !== '');
      await consume(deps.limiters.org, principal.org.id, deps.settings.orgLimitPerMinute);
      c.set('key', principal);
      return next();
    }
    if (!key || !parseApiKey(key)) throw invalidKey();
    // The key and its org in one read; a revoked key, or one whose org is gone, is the same 401.
    const found = await deps.storage.apiKeys.getWithOrgByHash(hashApiKey(key));
    if (!found || found.key.revoked_at !== undefined) throw options.oauth ? invalidCredential(deps, true) : invalidKey();
    const { key: record, org } = found;
    await consume(deps.limiters.org, org.id, deps.settings.orgLimitPerMinute);
    c.set('key', { record, org });
    // last_used_at is kept to the minute (the store's own rule too): no write while the one read is recent.
    const now = deps.clock.now();
    if (record.last_used_at === undefined || !(Date.parse(now) - Date.parse(record.last_used_at) < 60_000)) await deps.storage.apiKeys.touch(record.id, now);
    await next();
  };
}
