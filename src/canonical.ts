import { hash } from 'node:crypto';
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
  // Fast path: a value whose plain objects already list their keys in sorted order (at every depth)
  // serialises to the same bytes with the native JSON.stringify, several times faster than the
  // key-sorting serialiser. The journal builds its entries that way. Anything else (unsorted keys,
  // integer-like keys, toJSON, class instances, very deep or cyclic values) takes the general path.
  const out = inCanonicalOrder(value, 0) ? JSON.stringify(value) : stringify(value);
  if (out === undefined) throw new TypeError('[flowctl] canonicalJson: value is not JSON-serialisable');
  return out;
}

export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

const MAX_FAST_DEPTH = 64;

/**
 * Whether JSON.stringify(value) is already canonical: every object is a plain object (or array)
 * without toJSON whose own keys, in property order, are strictly ascending by UTF-16 code units
 * (as Array#sort orders them). Integer-like keys, which objects list numerically first, fail the
 * check whenever that order differs from the sorted one.
 */
function inCanonicalOrder(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > MAX_FAST_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inCanonicalOrder(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  let prev: string | undefined;
  for (const key of Object.keys(value)) {
    if (prev !== undefined && !(prev < key)) return false;
    prev = key;
    if (!inCanonicalOrder((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * A JSON value in canonical order: the value itself when it already is, else a copy with keys sorted
 * at every depth and undefined object members dropped (parts already in order are shared, not
 * copied). canonicalJson of either gives the same bytes; values in canonical order take its fast
 * path. Values JSON cannot hold as they are (toJSON, class instances, integer-like keys) are copied
 * through their canonical JSON text.
 */
export function inCanonicalForm<T>(value: T): T {
  return toCanonicalForm(value, 0) as T;
}

function toCanonicalForm(value: unknown, depth: number): unknown {
  if (inCanonicalOrder(value, depth)) return value;
  if (depth <= MAX_FAST_DEPTH && value !== null && typeof value === 'object') {
    if (Array.isArray(value)) {
      return value.map((v) => (v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : toCanonicalForm(v, depth + 1)));
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    const plain = (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
    const keys = Object.keys(value).sort();
    if (plain && !keys.some(isIntegerLike)) {
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const v = (value as Record<string, unknown>)[key];
        if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol') setMember(out, key, toCanonicalForm(v, depth + 1));
      }
      return out;
    }
  }
  const text = stringify(value);
  return text === undefined ? value : (JSON.parse(text) as unknown);
}

/**
 * `out[key] = value` as JSON.parse does it: an own data property, also for the key `__proto__`
 * (which an assignment would take as the prototype, silently dropping the member).
 */
function setMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  else out[key] = value;
}

/** Keys that objects list first, in numeric order, whatever order they were added in. */
function isIntegerLike(key: string): boolean {
  return /^(0|[1-9]\d*)$/.test(key) && Number(key) < 4294967295;
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
      if (v !== undefined) setMember(out, key, sortKeysDeep(v));
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
