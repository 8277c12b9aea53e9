import { isIP } from 'node:net';

/**
 * Host and Origin rules of a token-less REST launcher (docs/rest.md, "Cross-site requests and DNS
 * rebinding"): without a token, a page on another site must not be able to drive the server through
 * the user's browser, neither by posting a form to it nor by rebinding its own name to 127.0.0.1.
 */

/** Loopback: 127.0.0.0/8, ::1 (also as an IPv4-mapped 127.x address) and the name localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) {
    if (h === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(h)) return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped !== null && mapped[1]!.split('.')[0] === '127';
  }
  return false;
}

// RFC 9110 Host: uri-host [":" port]; a reg-name of letters, digits, '-', '.', or a bracketed IPv6.
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

/** The host name of a `Host` header value, lower-cased, brackets kept off; `undefined` when malformed. */
export function hostHeaderName(value: string): string | undefined {
  const m = HOST_HEADER.exec(value.trim());
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return undefined;
  return m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
}

/** The host name of an `Origin` header value (`scheme://host[:port]`); `undefined` for `null` or anything else. */
export function originHostName(value: string): string | undefined {
  const m = /^https?:\/\/([^/?#@\s]+)$/i.exec(value.trim());
  return m ? hostHeaderName(m[1]!) : undefined;
}

/**
 * Whether `name` (a host name as returned above) is one a token-less launcher answers: loopback, or
 * one of `allowed` (names compared case-insensitively, without port; `*` allows every name).
 */
export function hostAllowed(name: string, allowed: readonly string[]): boolean {
  if (isLoopbackHost(name)) return true;
  for (const a of allowed) {
    if (a === '*') return true;
    if (a.replace(/^\[|\]$/g, '').toLowerCase() === name) return true;
  }
  return false;
}
