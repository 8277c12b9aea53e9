import { sql, type RawBuilder } from 'kysely';
import { FlowError, prefixed } from '../../src/errors.js';

/**
 * Values in and out of SQL, identical on pg and PGlite.
 *
 * Parameters are sent as text and cast in SQL (`$1::text::jsonb`): PGlite picks a serializer from
 * the parameter's inferred type (it would JSON-encode our JSON text a second time) and node-pg
 * turns JS arrays into Postgres array literals. Text in, cast in SQL, avoids both.
 */

export function jsonb(value: unknown): RawBuilder<unknown> {
  const text = JSON.stringify(value);
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

export function parseJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
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

/** bytea arrives as a Buffer (pg) or a Uint8Array (PGlite); hand out a plain, unshared Uint8Array. */
export function toBytes(value: Uint8Array): Uint8Array {
  return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
}
