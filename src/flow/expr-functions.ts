import { canonicalJson } from '../canonical.js';

/**
 * The fixed set of pure functions available in expressions. None reads a clock, randomness or the
 * environment, and none throws: a value of the wrong kind gives a documented neutral result.
 * `returns` is the static result type the compiler uses to type-check whole-expression arguments.
 */
export interface ExprFunction {
  min: number;
  max: number;
  returns: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'any';
  call(args: unknown[]): unknown;
}

/** How a non-string value becomes text in interpolation and string functions. */
export function toText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  return canonicalJson(v);
}

export function isTruthy(v: unknown): boolean {
  return !(v === null || v === undefined || v === false || v === 0 || v === '' || Number.isNaN(v));
}

/** Structural equality over JSON values (key order ignored). */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEquals(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b as object, k) && jsonEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const isNil = (v: unknown): boolean => v === null || v === undefined;

export const FUNCTIONS: Record<string, ExprFunction> = {
  /** Length of a string (UTF-16 units), an array, or an object's key count; 0 otherwise. */
  len: {
    min: 1,
    max: 1,
    returns: 'integer',
    call: ([v]) => (typeof v === 'string' || Array.isArray(v) ? v.length : v !== null && typeof v === 'object' ? Object.keys(v).length : 0),
  },
  lower: { min: 1, max: 1, returns: 'string', call: ([v]) => toText(v).toLowerCase() },
  upper: { min: 1, max: 1, returns: 'string', call: ([v]) => toText(v).toUpperCase() },
  trim: { min: 1, max: 1, returns: 'string', call: ([v]) => toText(v).trim() },
  /** join(array, separator = ","): items as text; a non-array is returned as text. */
  join: {
    min: 1,
    max: 2,
    returns: 'string',
    call: ([arr, sep]) => (Array.isArray(arr) ? arr.map(toText).join(sep === undefined ? ',' : toText(sep)) : toText(arr)),
  },
  /** split(string, separator): an array of strings; an empty separator splits into characters. */
  split: { min: 2, max: 2, returns: 'array', call: ([s, sep]) => (isNil(s) ? [] : toText(s).split(toText(sep))) },
  /** Canonical JSON text (sorted keys). */
  json: { min: 1, max: 1, returns: 'string', call: ([v]) => canonicalJson(v ?? null) },
  string: { min: 1, max: 1, returns: 'string', call: ([v]) => toText(v) },
  /** number(x): a number from a number, a numeric string or a boolean; null when it is not one. */
  number: {
    min: 1,
    max: 1,
    returns: 'any',
    call: ([v]) => {
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (typeof v === 'string' && v.trim() !== '') {
        const n = Number(v);
        return Number.isFinite(n) ? n : null;
      }
      return null;
    },
  },
  /** at(list, index) or at(object, key): one element (negative indexes count from the end); null when absent. */
  at: {
    min: 2,
    max: 2,
    returns: 'any',
    call: ([v, k]) => {
      if (Array.isArray(v) && typeof k === 'number' && Number.isInteger(k)) return v[k < 0 ? v.length + k : k] ?? null;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof k === 'string' && Object.hasOwn(v, k)) {
        return (v as Record<string, unknown>)[k] ?? null;
      }
      return null;
    },
  },
  /** default(value, fallback): fallback when value is null or missing. */
  default: { min: 2, max: 2, returns: 'any', call: ([v, d]) => (isNil(v) ? (d ?? null) : v) },
  /** coalesce(a, b, ...): the first argument that is not null or missing. */
  coalesce: { min: 1, max: Infinity, returns: 'any', call: (args) => args.find((a) => !isNil(a)) ?? null },
  /** contains(haystack, needle): substring of a string, element of an array (structural), key of an object. */
  contains: {
    min: 2,
    max: 2,
    returns: 'boolean',
    call: ([h, n]) => {
      if (typeof h === 'string') return h.includes(toText(n));
      if (Array.isArray(h)) return h.some((x) => jsonEquals(x, n));
      if (h !== null && typeof h === 'object') return typeof n === 'string' && Object.hasOwn(h, n);
      return false;
    },
  },
  startsWith: { min: 2, max: 2, returns: 'boolean', call: ([s, p]) => typeof s === 'string' && s.startsWith(toText(p)) },
  endsWith: { min: 2, max: 2, returns: 'boolean', call: ([s, p]) => typeof s === 'string' && s.endsWith(toText(p)) },
};
