import { hash } from 'node:crypto';

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
  // integer-like keys, toJSON, class instances, very deep or cyclic values) takes the general path,
  // which keeps its own stack: no depth throws a RangeError (a cycle is a TypeError, as before).
  const out = inCanonicalOrder(value, 0) ? JSON.stringify(value) : stableStringify(value);
  if (out === undefined) throw new TypeError('[flowctl] canonicalJson: value is not JSON-serialisable');
  return out;
}

/** An array or object being serialised: its members are written one at a time to a shared output. */
interface WriteFrame {
  node: object;
  /** The object's keys (sorted for canonical JSON); undefined for an array. */
  keys: string[] | undefined;
  next: number;
  /** Members written so far (for commas, and for an empty container's `{}` / `[]`). */
  written: number;
  /** prettyStringify: this container's own indentation. */
  indent: string;
}

function isJsonContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/**
 * Canonical JSON off the fast path: the bytes of fast-json-stable-stringify (keys sorted by
 * Array#sort, `toJSON` applied, non-finite numbers `null`, undefined members dropped and undefined,
 * functions and symbols in arrays `null`, a cycle a TypeError), written token by token to one output
 * on an explicit stack, so a value of any depth serialises in linear time without a stack overflow.
 * Property-tested byte for byte against fast-json-stable-stringify (test/unit/canonical.test.ts,
 * test/unit/run/serialisers-deep.test.ts).
 */
function stableStringify(data: unknown): string | undefined {
  const resolve = (node: unknown): unknown =>
    node && typeof (node as { toJSON?: unknown }).toJSON === 'function' ? (node as { toJSON(): unknown }).toJSON() : node;
  const leaf = (node: unknown): string | undefined => {
    if (node === undefined) return undefined;
    if (typeof node === 'number') return Number.isFinite(node) ? `${node}` : 'null';
    return JSON.stringify(node);
  };
  const out: string[] = [];
  const ancestors = new Set<object>();
  const stack: WriteFrame[] = [];
  const enter = (node: object) => {
    if (ancestors.has(node)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(node);
    const array = Array.isArray(node);
    stack.push({ node, keys: array ? undefined : Object.keys(node).sort(), next: 0, written: 0, indent: '' });
    out.push(array ? '[' : '{');
  };
  const root = resolve(data);
  if (!isJsonContainer(root)) return leaf(root);
  enter(root);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { node, keys } = frame;
    const length = keys ? keys.length : (node as unknown[]).length;
    if (frame.next >= length) {
      out.push(keys ? '}' : ']');
      stack.pop();
      ancestors.delete(node);
      continue;
    }
    const at = frame.next++;
    const value = resolve(keys ? (node as Record<string, unknown>)[keys[at]!] : (node as unknown[])[at]);
    const text = isJsonContainer(value) ? undefined : leaf(value);
    // An object member whose value is not JSON (undefined, a function) is left out.
    if (keys && text === undefined && !isJsonContainer(value)) continue;
    if (frame.written++ > 0) out.push(',');
    if (keys) out.push(`${JSON.stringify(keys[at])}:`);
    if (isJsonContainer(value)) enter(value);
    else out.push(text ?? 'null');
  }
  return out.join('');
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
  const text = stableStringify(value);
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

/**
 * Pretty-printed JSON with deterministically sorted keys (the CLI's `--json` format): the bytes of
 * `JSON.stringify(sortKeysDeep(value), null, 2)`. A value too deep for the native serialiser's stack
 * is printed the same way on an explicit stack, so a stored run of any depth stays printable.
 */
export function prettyJson(value: unknown): string {
  const sorted = sortKeysDeep(value);
  try {
    return JSON.stringify(sorted, null, 2);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return prettyStringify(sorted) as string;
  }
}

/**
 * `JSON.stringify(value, null, 2)` on an explicit stack (toJSON with its key, undefined, functions and
 * symbols dropped from objects and `null` in arrays, non-finite numbers `null`, a cycle a TypeError),
 * written to one output. Exported for tests; prettyJson uses it only when the native serialiser runs
 * out of stack.
 */
export function prettyStringify(data: unknown): string | undefined {
  const resolve = (node: unknown, key: string): unknown =>
    node !== null && (typeof node === 'object' || typeof node === 'bigint') && typeof (node as { toJSON?: unknown }).toJSON === 'function'
      ? (node as { toJSON(key: string): unknown }).toJSON(key)
      : node;
  // Boxed primitives serialise as their primitive, as JSON.stringify does.
  const container = (node: unknown): node is object => isJsonContainer(node) && !(node instanceof Number || node instanceof String || node instanceof Boolean);
  const out: string[] = [];
  const ancestors = new Set<object>();
  const stack: WriteFrame[] = [];
  const enter = (node: object, indent: string) => {
    if (ancestors.has(node)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(node);
    const array = Array.isArray(node);
    stack.push({ node, keys: array ? undefined : Object.keys(node), next: 0, written: 0, indent });
    out.push(array ? '[' : '{');
  };
  const root = resolve(data, '');
  if (!container(root)) return JSON.stringify(root);
  enter(root, '');
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { node, keys, indent } = frame;
    const length = keys ? keys.length : (node as unknown[]).length;
    if (frame.next >= length) {
      const close = keys ? '}' : ']';
      out.push(frame.written > 0 ? `\n${indent}${close}` : close);
      stack.pop();
      ancestors.delete(node);
      continue;
    }
    const at = frame.next++;
    const key = keys ? keys[at]! : String(at);
    const value = resolve((node as Record<string, unknown>)[key], key);
    const text = container(value) ? undefined : JSON.stringify(value);
    if (keys && text === undefined && !container(value)) continue;
    const inner = `${indent}  `;
    out.push(frame.written++ > 0 ? `,\n${inner}` : `\n${inner}`);
    if (keys) out.push(`${JSON.stringify(key)}: `);
    if (container(value)) enter(value, inner);
    else out.push(text ?? 'null');
  }
  return out.join('');
}

/**
 * A copy of `value` with the keys of every object sorted and undefined members dropped (Dates and
 * other non-objects as they are). Walks on an explicit stack, so any depth is fine; a cycle is a
 * TypeError, as JSON.stringify would report it.
 */
export function sortKeysDeep(value: unknown): unknown {
  const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object' && !(v instanceof Date);
  if (!isContainer(value)) return value;
  const ancestors = new Set<object>();
  interface Frame {
    src: object;
    dst: Record<string, unknown> | unknown[];
    keys: string[] | undefined;
    next: number;
  }
  const frameOf = (src: object): Frame => {
    if (ancestors.has(src)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(src);
    const array = Array.isArray(src);
    return { src, dst: array ? new Array<unknown>((src as unknown[]).length) : {}, keys: array ? undefined : Object.keys(src).sort(), next: 0 };
  };
  const root = frameOf(value);
  const stack: Frame[] = [root];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const length = frame.keys ? frame.keys.length : (frame.src as unknown[]).length;
    if (frame.next >= length) {
      stack.pop();
      ancestors.delete(frame.src);
      continue;
    }
    const at = frame.next++;
    const v = frame.keys ? (frame.src as Record<string, unknown>)[frame.keys[at]!] : (frame.src as unknown[])[at];
    if (frame.keys && v === undefined) continue;
    let out = v;
    if (isContainer(v)) {
      const child = frameOf(v);
      out = child.dst;
      stack.push(child);
    }
    if (frame.keys) setMember(frame.dst as Record<string, unknown>, frame.keys[at]!, out);
    else (frame.dst as unknown[])[at] = out;
  }
  return root.dst;
}

/**
 * The deepest nesting of arrays and objects a step's output may have (the runner refuses a deeper one
 * with `output_contract_violation`): well below what the native serialisers that read stored runs
 * back handle on Node's default stack (JSON.stringify about 4,400 levels, structuredClone about
 * 1,600), so every stored run stays readable. Inputs are bounded far lower (64, the inputs contract).
 */
export const MAX_STORED_DEPTH = 1000;

/**
 * Whether `value` nests more than `max` arrays and objects (a scalar is depth 0, `{}` depth 1).
 * Iterative, and it stops as soon as it passes `max`, so any value (deep, cyclic) is checked safely.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Freeze a JSON value and everything in it (already frozen parts are skipped). Returns the value. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
