import { createHash, timingSafeEqual } from 'node:crypto';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Whether an `Authorization` header carries `Bearer <token>`. Both sides are hashed first so the
 * comparison is constant-time and does not leak the token's length (timingSafeEqual needs equal lengths).
 */
export function bearerMatches(header: string | null | undefined, token: string): boolean {
  const match = /^Bearer[ \t]+(\S(?:.*\S)?)[ \t]*$/i.exec(header ?? '');
  const presented = match ? match[1]! : '';
  // Always compare, even when the header is absent, so timing says nothing about which check failed.
  const equal = timingSafeEqual(sha256(presented), sha256(token));
  return match !== null && equal;
}
