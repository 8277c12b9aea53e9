import type { ColumnType, RawBuilder } from 'kysely';

/**
 * The tables of the SQL storage, as kysely sees them (typed queries, no code generation). The DDL
 * that creates them is in migrations.ts; docs/storage-sql.md describes both.
 *
 * JSON columns are `jsonb`. They are written from our own `JSON.stringify` text (node-pg would turn
 * a JS array into a Postgres array literal) and read back as `::text` and parsed here, so a stored
 * JSON `null` stays distinguishable from an absent value (SQL NULL) and both drivers behave alike.
 */
export type Jsonb = ColumnType<unknown, RawBuilder<unknown>, RawBuilder<unknown>>;
export type JsonbOrNull = ColumnType<unknown, RawBuilder<unknown> | null, RawBuilder<unknown> | null>;
/** Timestamps are written as ISO strings cast to timestamptz, read back through `to_char` (see timestamps.ts). */
export type Timestamptz = ColumnType<unknown, RawBuilder<unknown>, RawBuilder<unknown>>;
export type TimestamptzOrNull = ColumnType<unknown, RawBuilder<unknown> | null, RawBuilder<unknown> | null>;

export interface SpecsTable {
  digest: string;
  spec: Jsonb;
}

export interface DeploysTable {
  front: string;
  name: string;
  digest: string;
}

export interface RunsTable {
  id: string;
  flow_digest: string;
  flow_name: string;
  status: string;
  started_at: Timestamptz;
  finished_at: TimestamptzOrNull;
  output: JsonbOrNull;
  error: JsonbOrNull;
  replay_of: string | null;
  inputs: JsonbOrNull;
  lease: JsonbOrNull;
  cancel_requested: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface JournalTable {
  run_id: string;
  seq: number;
  entry: Jsonb;
}

export interface ArtifactsTable {
  digest: string;
  media_type: string;
  bytes: Uint8Array;
}

export interface SqlDatabase {
  specs: SpecsTable;
  deploys: DeploysTable;
  runs: RunsTable;
  journal: JournalTable;
  artifacts: ArtifactsTable;
}

/** Run ids are uuids (spec/engine.md: uuid v4), stored as lowercase text. */
export const UUID_SQL_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
export const DIGEST_SQL_PATTERN = '^sha256:[0-9a-f]{64}$';
export const RUN_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'canceled'] as const;
