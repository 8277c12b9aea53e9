import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { sha256Hex } from '../../canonical.js';

/**
 * Org-scoped API keys (docs/hosted-api.md, "API keys").
 *
 * `svc_live_` or `svc_test_`, then 30 base62 characters of randomness (over 178 bits; at least 128
 * are asked for), then a 6-character base62 CRC32 of everything before it, as GitHub's tokens carry,
 * so a secret scanner can tell a real key from a typo offline. The database keeps only the SHA-256
 * of the whole key, and the prefix and last 4 characters for display.
 */

export type KeyMode = 'live' | 'test';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
export const KEY_PATTERN = /^svc_(live|test)_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/;

function base62(n: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

/** The checksum part of a key body (`svc_live_<random>`). */
export function keyChecksum(body: string): string {
  return base62(BigInt(crc32(Buffer.from(body, 'ascii'))), CHECKSUM_CHARS);
}

/** A new key: 30 base62 characters (178 bits) from 24 random bytes, then the checksum. */
export function mintApiKey(mode: KeyMode, random: (n: number) => Uint8Array = randomBytes): string {
  const bytes = random(24);
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  const body = `svc_${mode}_${base62(n, RANDOM_CHARS)}`;
  return body + keyChecksum(body);
}

export interface ParsedKey {
  mode: KeyMode;
  /** `svc_live_` or `svc_test_` plus the first 4 random characters: what lists show. */
  prefix: string;
  last4: string;
}

/** Format and checksum; `undefined` for anything else (no database lookup is needed to refuse it). */
export function parseApiKey(key: string): ParsedKey | undefined {
  const m = KEY_PATTERN.exec(key);
  if (!m) return undefined;
  const body = key.slice(0, key.length - CHECKSUM_CHARS);
  if (keyChecksum(body) !== m[3]) return undefined;
  return { mode: m[1] as KeyMode, prefix: key.slice(0, 9 + 4), last4: key.slice(-4) };
}

/** What is stored and looked up: hex SHA-256 of the whole key. */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}
