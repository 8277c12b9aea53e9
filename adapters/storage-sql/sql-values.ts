import { sql, type RawBuilder } from 'kysely';
import { FlowError, prefixed } from '../../src/errors.js';
import type { RunPatch } from '../../src/ports/storage.js';
import type { SqlContext } from './sql-context.js';

/**
 * Values in and out of SQL, identical on pg and PGlite.
 *
 * Parameters are sent as text and cast in SQL (`$1::text::jsonb`): PGlite picks a serializer from
 * the parameter's inferred type (it would JSON-encode our JSON text a second time) and node-pg
 * turns JS arrays into Postgres array literals. Text in, cast in SQL, avoids both.
 */

/**
 * Postgres `jsonb` (and `text`) cannot hold U+0000, and `jsonb` refuses a lone surrogate (`\ud800`
 * without its pair). JSON values may hold both, so a string (value or key) that contains either, or
 * that starts with U+FFFF, is stored encoded: U+FFFF (a noncharacter, which no text needs to start
 * with) followed by the JSON text of the string, in which JSON.stringify escapes U+0000 and lone
 * surrogates as `\u0000` and `\ud800`. Reading decodes every string and key that starts with U+FFFF,
 * so values come back exactly as they went in. Every other string is stored as it is, and the common
 * case costs one regular-expression test of the JSON text on the way in and one `includes` on the
 * way out.
 */
export const ENCODED_STRING_MARK = '\uffff';

const MARK_CODE = 0xffff;
const LONE_SURROGATE = /\p{Cs}/u;
/** In JSON.stringify text: an escaped U+0000 or lone surrogate, or U+FFFF anywhere (a superset of what needs encoding). */
const SUSPECT = /\\u0000|\\ud[89a-f][0-9a-f]{2}|\uffff/;

function needsEncoding(text: string): boolean {
  return text.charCodeAt(0) === MARK_CODE || text.includes('\u0000') || LONE_SURROGATE.test(text);
}

export function encodeStoredString(text: string): string {
  return needsEncoding(text) ? ENCODED_STRING_MARK + JSON.stringify(text) : text;
}

export function decodeStoredString(text: string): string {
  if (text.charCodeAt(0) !== MARK_CODE) return text;
  try {
    const decoded: unknown = JSON.parse(text.slice(1));
    // Written by this encoding, the rest is always a JSON string; anything else was stored as it is.
    return typeof decoded === 'string' ? decoded : text;
  } catch {
    return text;
  }
}

function encodeMembers(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return encodeStoredString(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.some(needsEncoding)) {
      // fromEntries defines own properties, so a key like `__proto__` stays data.
      return Object.fromEntries(keys.map((k) => [encodeStoredString(k), (value as Record<string, unknown>)[k]]));
    }
  }
  return value;
}

/**
 * The JSON text stored for `value` (strings encoded where Postgres needs it), or undefined. `text`,
 * when given, is `value`'s JSON text already made by the caller (the engine's sealed entry text): it
 * is used as it is unless it holds something to encode.
 */
export function storedJsonText(value: unknown, text?: string): string | undefined {
  const plain = text ?? JSON.stringify(value);
  if (plain === undefined || !SUSPECT.test(plain)) return plain;
  return JSON.stringify(value, encodeMembers);
}

function setOwn(holder: object, key: string | number, value: unknown): void {
  Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The value of stored JSON text, with encoded strings and keys decoded. JSON.parse does not recurse
 * on the stack, and neither does the decoding walk, so any depth that was stored can be read.
 */
export function parseStoredJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!text.includes(ENCODED_STRING_MARK)) return value;
  const root = { value };
  const stack: Array<[object, string | number]> = [[root, 'value']];
  while (stack.length > 0) {
    const [holder, key] = stack.pop()!;
    let v = (holder as Record<string | number, unknown>)[key];
    if (typeof v === 'string') {
      if (v.charCodeAt(0) === MARK_CODE) setOwn(holder, key, decodeStoredString(v));
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v, i]);
      continue;
    }
    const keys = Object.keys(v);
    if (keys.some((k) => k.charCodeAt(0) === MARK_CODE)) {
      const source = v as Record<string, unknown>;
      v = Object.fromEntries(keys.map((k) => [decodeStoredString(k), source[k]]));
      setOwn(holder, key, v);
    }
    for (const k of Object.keys(v as object)) stack.push([v as object, k]);
  }
  return root.value;
}

export function jsonb(value: unknown): RawBuilder<unknown> {
  const text = storedJsonText(value);
  if (text === undefined) throw new FlowError('invalid_record', prefixed('storage-sql', 'value is not JSON-serialisable'));
  return sql`${text}::text::jsonb`;
}

/** Optional JSON: undefined is SQL NULL (absent); JSON null is stored as the jsonb value `null`. */
export function jsonbOrNull(value: unknown): RawBuilder<unknown> | null {
  return value === undefined ? null : jsonb(value);
}

/** A jsonb column read back as text (so `null` and absent stay distinct), named `alias`. */
export function jsonText<A extends string>(column: string, alias: A) {
  return sql<string | null>`${sql.ref(column)}::text`.as(alias);
}

/** A NOT NULL jsonb column read back as text, named `alias`. */
export function jsonTextNotNull<A extends string>(column: string, alias: A) {
  return sql<string>`${sql.ref(column)}::text`.as(alias);
}

export function parseJson(text: string | null): unknown {
  return text === null ? undefined : parseStoredJson(text);
}

/**
 * Timestamps are `timestamptz` and come back exactly as they went in. The accepted form is the one
 * the Clock port and the Run schema use, `Date.prototype.toISOString()`: `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (UTC, milliseconds). Reading renders the instant in UTC with milliseconds through `to_char`, which
 * reproduces that string byte for byte whatever the session time zone. Any other spelling of an
 * instant (offsets, other precisions) would come back different, so it is refused, not altered.
 */
export function timestamptz(field: string, value: string): RawBuilder<unknown> {
  if (!isCanonicalTimestamp(value)) {
    throw new FlowError(
      'invalid_record',
      prefixed('storage-sql', `${field} must be an ISO-8601 UTC timestamp with milliseconds (as Date.toISOString() gives), got ${JSON.stringify(value)}`),
      { data: { field, value } },
    );
  }
  return sql`${value}::text::timestamptz`;
}

export function timestamptzOrNull(field: string, value: string | undefined): RawBuilder<unknown> | null {
  return value === undefined ? null : timestamptz(field, value);
}

export function isCanonicalTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value)) return false;
  const date = new Date(value);
  return !Number.isNaN(date.getTime()) && date.toISOString() === value;
}

/** A timestamptz column rendered as `YYYY-MM-DDTHH:MM:SS.sssZ`, named `alias`. */
export function isoText<A extends string>(column: string, alias: A) {
  return sql<string | null>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(alias);
}

/** A NOT NULL timestamptz column rendered as `isoText` renders it, named `alias`. */
export function isoTextNotNull<A extends string>(column: string, alias: A) {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(alias);
}

/** bytea arrives as a Buffer (pg) or a Uint8Array (PGlite); hand out a plain, unshared Uint8Array. */
export function toBytes(value: Uint8Array): Uint8Array {
  return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
}

/** The rows of a raw statement: as a named prepared statement when the context has them (sql-context.ts), else through kysely. */
export async function runRows<T>(ctx: Pick<SqlContext, 'db' | 'prepared'>, query: RawBuilder<T>): Promise<T[]> {
  if (ctx.prepared) {
    const compiled = query.compile(ctx.db);
    return (await ctx.prepared(compiled.sql, compiled.parameters)) as T[];
  }
  return (await query.execute(ctx.db)).rows;
}

/** A table of the storage in raw SQL, qualified by the storage's schema when it has one. */
export function table(ctx: Pick<SqlContext, 'schema'>, name: string): RawBuilder<unknown> {
  return ctx.schema === undefined ? sql.id(name) : sql.id(ctx.schema, name);
}

const PATCH_KEYS = ['status', 'finished_at', 'output', 'error', 'lease', 'cancel_requested'] as const;

/**
 * A run patch as the JSON text the append statement applies: only the fields `runs.update` knows,
 * undefined ones left out (unchanged), `finished_at` checked like every stored timestamp.
 */
export function runPatchText(patch: RunPatch): string {
  const out: Record<string, unknown> = {};
  for (const key of PATCH_KEYS) if (patch[key] !== undefined) out[key] = patch[key];
  if (out.finished_at !== undefined) timestamptz('finished_at', out.finished_at as string);
  if (out.cancel_requested !== undefined && typeof out.cancel_requested !== 'boolean') {
    throw new FlowError('invalid_record', prefixed('storage-sql', `cancel_requested must be a boolean, got ${JSON.stringify(out.cancel_requested)}`));
  }
  const text = storedJsonText(out);
  if (text === undefined) throw new FlowError('invalid_record', prefixed('storage-sql', 'value is not JSON-serialisable'));
  return text;
}
