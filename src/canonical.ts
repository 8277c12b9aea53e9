import { createHash } from 'node:crypto';
import stringify from 'fast-json-stable-stringify';

/** A content digest: `sha256:` followed by 64 lowercase hex characters. */
export type Digest = `sha256:${string}`;

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/**
 * Canonical JSON: keys sorted at every depth, no insignificant whitespace. `undefined` members are
 * dropped (as JSON.stringify does), so optional fields that are absent and fields set to undefined
 * give the same bytes.
 */
export function canonicalJson(value: unknown): string {
  const out = stringify(value);
  if (out === undefined) throw new TypeError('[flowctl] canonicalJson: value is not JSON-serialisable');
  return out;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<hex>` of raw bytes or a string (UTF-8). */
export function digestBytes(data: string | Uint8Array): Digest {
  return `sha256:${sha256Hex(data)}`;
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function digestOf(value: unknown): Digest {
  return digestBytes(canonicalJson(value));
}

export function isDigest(value: unknown): value is Digest {
  return typeof value === 'string' && DIGEST_PATTERN.test(value);
}

/** Pretty-printed JSON with deterministically sorted keys (the CLI's `--json` format). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value), null, 2);
}

export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as Record<string, unknown>).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeysDeep(v);
    }
    return out;
  }
  return value;
}

/** Freeze a JSON value and everything in it (already frozen parts are skipped). Returns the value. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
