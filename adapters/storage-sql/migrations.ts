import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { FlowError, prefixed } from '../../src/errors.js';
import { quoteIdent } from './journal-notifier.js';
import { DIGEST_SQL_PATTERN, RUN_STATUSES, UUID_SQL_PATTERN } from './schema.js';
import { errorCode } from './sql-errors.js';

/**
 * The one migration set, shared by PGlite and Postgres, applied by kysely's Migrator at init.
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
      await db.schema
        .createIndex('runs_by_flow_newest')
        .on('runs')
        .columns(['flow_name', 'started_at desc', 'id desc'])
        .execute();
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

const provider: MigrationProvider = { getMigrations: async () => ({ ...MIGRATIONS }) };

/**
 * Bring the database to the latest schema this code knows. A database that recorded a migration
 * this code does not know was written by a newer flowctl: refuse it (FlowError `schema_too_new`)
 * rather than run against tables we do not understand.
 */
export async function migrateToLatest(db: Kysely<any>, schema: string | undefined): Promise<string[]> {
  if (schema !== undefined) {
    // `if not exists` still races when several processes create the schema at once: the loser's
    // unique violation means the schema is there, which is all we need.
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db).catch((err: unknown) => {
      if (errorCode(err) !== '23505' && errorCode(err) !== '42P06') throw err;
    });
  }
  await refuseNewerSchema(db, schema);
  const migrator = new Migrator({ db, provider, migrationTableSchema: schema });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    // A newer process may have migrated between our check and the Migrator's own read.
    if (error instanceof Error && /previously executed migration .* is missing/.test(error.message)) {
      await refuseNewerSchema(db, schema);
    }
    throw error;
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

async function refuseNewerSchema(db: Kysely<any>, schema: string | undefined): Promise<void> {
  const table = schema === undefined ? sql.id('kysely_migration') : sql.id(schema, 'kysely_migration');
  const exists = await sql<{ t: string | null }>`select to_regclass(${schema === undefined ? 'kysely_migration' : `${quoteIdent(schema)}.kysely_migration`}) as t`.execute(db);
  if (!exists.rows[0]?.t) return;
  const applied = await sql<{ name: string }>`select name from ${table} order by name`.execute(db);
  const unknown = applied.rows.map((r) => r.name).filter((name) => !(name in MIGRATIONS));
  if (unknown.length > 0) {
    throw new FlowError(
      'schema_too_new',
      prefixed(
        'storage-sql',
        `the database schema${schema ? ` "${schema}"` : ''} has migrations this flowctl does not know (${unknown.join(', ')}); ` +
          `it was written by a newer flowctl. Upgrade flowctl, or point it at another database or schema.`,
      ),
      { data: { unknown, known: Object.keys(MIGRATIONS) } },
    );
  }
}
