import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The `svc_session` cookie (spec/hosted-service.md, "Session cookie"):
 * `base64url(payload).base64url(hmac-sha256(base64url(payload)))`.
 *
 * The payload names a server-side session row (`sid`) and carries the absolute expiry (`exp`, epoch
 * seconds, 30 days after login, never extended). The row is what makes logout and member removal
 * revoke at once; the signature only saves a database round trip for forged cookies. Keys rotate:
 * the first of `secrets` signs, every one verifies.
 */

export const SESSION_COOKIE = 'svc_session';
export const SESSION_LIFETIME_SECONDS = 30 * 24 * 60 * 60;
export const MIN_SESSION_SECRET_LENGTH = 32;

export interface SessionPayload {
  /** Server-side session id. */
  sid: string;
  /** Absolute expiry, epoch seconds. */
  exp: number;
}

const b64url = (buf: Buffer | string) => Buffer.from(buf).toString('base64url');

function mac(secret: string, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

export function signSession(payload: SessionPayload, secrets: readonly string[]): string {
  const body = b64url(JSON.stringify({ sid: payload.sid, exp: payload.exp }));
  return `${body}.${b64url(mac(secrets[0]!, body))}`;
}

/**
 * The payload of a well-formed, correctly signed cookie value that has not expired at `nowSeconds`;
 * `undefined` for anything else (never throws).
 */
export function verifySession(value: string | undefined, secrets: readonly string[], nowSeconds: number): SessionPayload | undefined {
  if (!value || value.length > 512) return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0 || dot !== value.lastIndexOf('.')) return undefined;
  const body = value.slice(0, dot);
  const sig = value.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return undefined;
  const given = Buffer.from(sig, 'base64url');
  // One spelling per signature: base64url ignores the low bits of the last character, so without this
  // check four spellings of each cookie would verify.
  if (given.length !== 32 || b64url(given) !== sig || !secrets.some((s) => timingSafeEqual(mac(s, body), given))) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const p = payload as Partial<SessionPayload>;
  if (typeof p?.sid !== 'string' || typeof p.exp !== 'number' || !Number.isFinite(p.exp)) return undefined;
  if (p.exp <= nowSeconds) return undefined;
  return { sid: p.sid, exp: p.exp };
}

export interface CookieAttributes {
  /** Secure: whenever the public URL is https or the request arrived over TLS. */
  secure: boolean;
  /** Seconds until the absolute expiry; 0 clears the cookie. */
  maxAgeSeconds: number;
}

/** The `Set-Cookie` header value for a session cookie (or its clearing, with maxAgeSeconds 0). */
export function sessionCookieHeader(value: string, attrs: CookieAttributes): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${Math.max(0, Math.floor(attrs.maxAgeSeconds))}`];
  if (attrs.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The `svc_session` value from a Cookie header, if present (first occurrence). */
export function readSessionCookie(cookieHeader: string | null | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}
