import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { ENGINE_MIGRATION_LOCK_TABLE, ENGINE_MIGRATION_TABLE, migrateSet, type MigrationSet } from './migration-set.js';
import { DIGEST_SQL_PATTERN, RUN_STATUSES, UUID_SQL_PATTERN } from './schema.js';

/**
 * The engine's migration set, shared by PGlite and Postgres, applied by kysely's Migrator at init.
 * Names sort in the order they apply. Never edit a released migration: add the next one.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': {
    async up(db: Kysely<any>): Promise<void> {
      const statuses = sql.join(RUN_STATUSES.map((s) => sql.lit(s)));
      await db.schema
        .createTable('specs')
        .addColumn('digest', 'text', (c) => c.primaryKey().check(sql`digest ~ ${sql.lit(DIGEST_SQL_PATTERN)}`))
        .addColumn('spec', 'jsonb', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('deploys')
        .addColumn('front', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull().check(sql`digest ~ ${sql.lit(DIGEST_SQL_PATTERN)}`))
        .addPrimaryKeyConstraint('deploys_pkey', ['front', 'name'])
        .execute();
      await db.schema
        .createTable('runs')
        .addColumn('id', 'text', (c) => c.primaryKey().check(sql`id ~ ${sql.lit(UUID_SQL_PATTERN)}`))
        .addColumn('flow_digest', 'text', (c) => c.notNull().check(sql`flow_digest ~ ${sql.lit(DIGEST_SQL_PATTERN)}`))
        .addColumn('flow_name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${statuses})`))
        .addColumn('started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('finished_at', 'timestamptz')
        .addColumn('output', 'jsonb')
        .addColumn('error', 'jsonb')
        .addColumn('replay_of', 'text')
        .execute();
      // RunStore.list: newest first by (started_at, id), optionally per flow name.
      await db.schema.createIndex('runs_newest').on('runs').columns(['started_at desc', 'id desc']).execute();
      await db.schema.createIndex('runs_by_flow_newest').on('runs').columns(['flow_name', 'started_at desc', 'id desc']).execute();
      await db.schema
        .createTable('journal')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull().check(sql`seq >= 0`))
        .addColumn('entry', 'jsonb', (c) => c.notNull())
        // The primary key is what makes a second writer of entry N fail instead of forking the journal.
        .addPrimaryKeyConstraint('journal_pkey', ['run_id', 'seq'])
        .addCheckConstraint('journal_entry_seq', sql`(entry->>'seq')::integer = seq`)
        .execute();
      await db.schema
        .createTable('artifacts')
        .addColumn('digest', 'text', (c) => c.primaryKey().check(sql`digest ~ ${sql.lit(DIGEST_SQL_PATTERN)}`))
        .addColumn('media_type', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bytea', (c) => c.notNull())
        .execute();
    },
  },
  // Runs by id across processes: the stored inputs (secret references only), the executor's lease
  // and the cancel flag (docs/journal.md, "Leases and recovery").
  '0002_run_lease': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('runs')
        .addColumn('inputs', 'jsonb')
        .addColumn('lease', 'jsonb')
        .addColumn('cancel_requested', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
      // The recovery sweep reads the non-terminal runs only.
      await db.schema.createIndex('runs_by_status').on('runs').column('status').execute();
    },
  },
};

/** The engine's set, over kysely's default migration tables (released databases carry them). */
export const ENGINE_MIGRATION_SET: MigrationSet = {
  name: 'engine',
  table: ENGINE_MIGRATION_TABLE,
  lockTable: ENGINE_MIGRATION_LOCK_TABLE,
  migrations: MIGRATIONS,
};

/**
 * Bring the database to the latest engine schema this code knows. A database whose engine migration
 * table records a migration this code does not know was written by a newer flowctl: refuse it
 * (FlowError `schema_too_new`) rather than run against tables we do not understand. Other sets'
 * migrations (the hosted service's, a consumer's) are not looked at.
 */
export function migrateToLatest(db: Kysely<any>, schema: string | undefined): Promise<string[]> {
  return migrateSet(db, schema, ENGINE_MIGRATION_SET, true);
}
