import type { MiddlewareHandler } from 'hono';
import type { SessionRecord } from '../../ports/service-storage.js';
import type { ServiceContext, ServiceDeps, ServiceEnv, SessionAuth } from '../context.js';
import { serviceError } from '../errors.js';
import { readSessionCookie, sessionCookieHeader, signSession, SESSION_LIFETIME_SECONDS, verifySession } from './session-cookie.js';

/**
 * Guards of the dashboard routes (docs/hosted-api.md, "Authentication"): the session cookie, the
 * owner role, and the Origin rule for cookie-authenticated writes (CSRF).
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The client's address: the socket's, or the first X-Forwarded-For hop when the proxy is trusted. */
export function clientIp(c: ServiceContext, deps: ServiceDeps): string {
  if (deps.settings.trustProxy) {
    const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  return c.env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/** Secure cookies whenever the public URL is https or this request arrived over TLS. */
export function isSecure(c: ServiceContext, deps: ServiceDeps): boolean {
  return deps.settings.publicUrl.startsWith('https:') || new URL(c.req.url).protocol === 'https:' || c.env?.incoming?.socket?.encrypted === true;
}

/**
 * A write from a browser on a foreign origin is refused (403 `forbidden`): the Origin header, when
 * present, must be allowlisted, and `Sec-Fetch-Site: cross-site` is refused outright. Requests
 * without Origin (curl, servers) pass: they cannot carry a victim's cookie by accident, and JSON-only
 * bodies keep plain HTML forms out.
 */
export function checkOrigin(c: ServiceContext, deps: ServiceDeps): void {
  if (SAFE_METHODS.has(c.req.method)) return;
  const origin = c.req.header('origin');
  if (origin !== undefined && !deps.settings.origins.includes(origin.replace(/\/+$/, ''))) {
    throw serviceError('forbidden', `requests from origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (SVC_ORIGINS)`);
  }
  if (origin === undefined && c.req.header('sec-fetch-site') === 'cross-site') {
    throw serviceError('forbidden', 'cross-site requests are not allowed');
  }
}

/** Issue a fresh cookie for `session` (its absolute expiry never moves). */
export function setSessionCookie(c: ServiceContext, deps: ServiceDeps, session: SessionRecord): void {
  const exp = Math.floor(Date.parse(session.expires_at) / 1000);
  const value = signSession({ sid: session.id, exp }, deps.settings.sessionSecrets);
  const now = Math.floor(Date.parse(deps.clock.now()) / 1000);
  c.header('set-cookie', sessionCookieHeader(value, { secure: isSecure(c, deps), maxAgeSeconds: exp - now }), { append: true });
}

export function clearSessionCookie(c: ServiceContext, deps: ServiceDeps): void {
  c.header('set-cookie', sessionCookieHeader('', { secure: isSecure(c, deps), maxAgeSeconds: 0 }), { append: true });
}

/** A new session row: 30 days absolute from now. */
export function newSession(deps: ServiceDeps, userId: string, orgId: string): SessionRecord {
  const now = deps.clock.now();
  return {
    id: deps.ids.uuid(),
    user_id: userId,
    org_id: orgId,
    created_at: now,
    expires_at: new Date(Date.parse(now) + SESSION_LIFETIME_SECONDS * 1000).toISOString(),
  };
}

export type SessionCheck = { ok: true } | { ok: false; cookieSent: boolean };

/**
 * Load the caller's session into `c.var.auth`. Fails for: no cookie, a malformed, tampered or
 * expired cookie, a revoked or expired session row, or a user no longer a member of the session's
 * org. `cookieSent` tells whether a cookie was presented (GET /api/session provisions only without).
 */
export async function loadSession(c: ServiceContext, deps: ServiceDeps): Promise<SessionCheck> {
  const found = await sessionFromCookie(c.req.header('cookie'), deps);
  if (found === 'none') return { ok: false, cookieSent: false };
  if (found === 'invalid') return { ok: false, cookieSent: true };
  c.set('auth', found);
  return { ok: true };
}

/** The caller a Cookie header names (loadSession's rule, also for WebSocket upgrades): `none` without a session cookie. */
export async function sessionFromCookie(cookieHeader: string | undefined, deps: ServiceDeps): Promise<SessionAuth | 'none' | 'invalid'> {
  const raw = readSessionCookie(cookieHeader);
  if (raw === undefined) return 'none';
  const nowIso = deps.clock.now();
  const now = Math.floor(Date.parse(nowIso) / 1000);
  const payload = verifySession(raw, deps.settings.sessionSecrets, now);
  if (!payload) return 'invalid';
  const found = await deps.storage.sessions.lookup(payload.sid);
  if (!found || found.session.revoked_at !== undefined || found.session.expires_at <= nowIso || found.role === undefined) return 'invalid';
  return { session: found.session, user: found.user, org: found.org, role: found.role, orgs: found.orgs };
}

/** Middleware: a valid session, and for writes an allowed Origin. */
export function requireSession(deps: ServiceDeps): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    checkOrigin(c, deps);
    const check = await loadSession(c, deps);
    if (!check.ok) {
      if (check.cookieSent) clearSessionCookie(c, deps);
      throw serviceError('unauthenticated', 'sign in first: no valid session cookie');
    }
    await next();
  };
}

/** Middleware after requireSession: the caller is an owner of the session's org. */
export function requireOwner(): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    if (c.get('auth').role !== 'owner') throw serviceError('forbidden', 'only an owner of the org may do this');
    await next();
  };
}
