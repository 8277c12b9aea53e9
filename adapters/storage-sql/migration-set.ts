import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import { FlowError, prefixed } from '../../src/errors.js';
import { quoteIdent } from './journal-notifier.js';
import { errorCode } from './sql-errors.js';
import type { SqlStorage } from './sql-storage.js';

/**
 * One owner's migrations with their own migration tables (docs/storage-sql.md, "Migration sets").
 * Several sets live in one database (schema): the engine's, the hosted service's, a consumer's own.
 * Each set records what it applied in its own `table` and refuses only a newer schema of its own,
 * so a database where another set has migrations this code does not know still opens.
 */
export interface MigrationSet {
  /** Who owns the set, named in errors (`engine`, `hosted service`, ...). */
  readonly name: string;
  /** The table recording the set's applied migrations (kysely's Migrator table). Unique per set. */
  readonly table: string;
  /** The Migrator's lock table of the set. Unique per set. */
  readonly lockTable: string;
  /** Applied in name order. Never edit a released migration: add the next one. */
  readonly migrations: Readonly<Record<string, Migration>>;
}

/** The engine's migration tables: kysely's default names, which released databases already carry. */
export const ENGINE_MIGRATION_TABLE = 'kysely_migration';
export const ENGINE_MIGRATION_LOCK_TABLE = 'kysely_migration_lock';

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function invalid(message: string): FlowError {
  return new FlowError('invalid_options', prefixed('storage-sql', message));
}

/**
 * Refuse a set that would read or write another set's records: the tables must be plain lowercase
 * identifiers, distinct, and only the set whose table is `kysely_migration` (the engine's) may use
 * the engine's names.
 */
export function checkMigrationSet(set: MigrationSet, engine = false): void {
  if (typeof set?.name !== 'string' || set.name.length === 0) throw invalid('a migration set needs a name');
  for (const [what, table] of [
    ['table', set.table],
    ['lockTable', set.lockTable],
  ] as const) {
    if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
      throw invalid(`migration set "${set.name}": ${what} must be a lowercase SQL identifier of at most 63 characters`);
    }
  }
  if (set.table === set.lockTable) throw invalid(`migration set "${set.name}": table and lockTable must differ`);
  const engineNames = [ENGINE_MIGRATION_TABLE, ENGINE_MIGRATION_LOCK_TABLE];
  if (!engine && (engineNames.includes(set.table) || engineNames.includes(set.lockTable))) {
    throw invalid(`migration set "${set.name}": ${ENGINE_MIGRATION_TABLE} and ${ENGINE_MIGRATION_LOCK_TABLE} are the engine's; give the set its own tables`);
  }
  if (set.migrations === null || typeof set.migrations !== 'object' || Object.keys(set.migrations).length === 0) {
    throw invalid(`migration set "${set.name}": migrations must name at least one migration`);
  }
}

/**
 * The names recorded in the set's table, in name order; `undefined` when the table does not exist
 * (the set was never applied here).
 */
export async function appliedMigrations(db: Kysely<any>, schema: string | undefined, table: string): Promise<string[] | undefined> {
  const qualified = schema === undefined ? quoteIdent(table) : `${quoteIdent(schema)}.${quoteIdent(table)}`;
  const exists = await sql<{ t: string | null }>`select to_regclass(${qualified}) as t`.execute(db);
  if (!exists.rows[0]?.t) return undefined;
  const ref = schema === undefined ? sql.id(table) : sql.id(schema, table);
  return (await sql<{ name: string }>`select name from ${ref} order by name`.execute(db)).rows.map((r) => r.name);
}

/**
 * A database whose table of this set records a migration this code does not know was migrated by
 * newer code: FlowError `schema_too_new` (data: set, table, unknown, known). Other sets' tables are
 * not read.
 */
export async function refuseNewerMigrations(db: Kysely<any>, schema: string | undefined, set: MigrationSet): Promise<void> {
  const applied = await appliedMigrations(db, schema, set.table);
  const unknown = (applied ?? []).filter((name) => !Object.hasOwn(set.migrations, name));
  if (unknown.length === 0) return;
  throw new FlowError(
    'schema_too_new',
    prefixed(
      'storage-sql',
      `the ${set.name} migrations in the database${schema ? ` schema "${schema}"` : ''} include ones this code does not know (${unknown.join(', ')}): ` +
        `newer code migrated it. Upgrade flowctl, or point it at another database or schema.`,
    ),
    { data: { set: set.name, table: set.table, unknown, known: Object.keys(set.migrations) } },
  );
}

/**
 * Bring the set's tables to the latest migration this code knows, with kysely's Migrator over the
 * set's own migration tables in `schema` (created when missing). Refuses first (and again if a newer
 * process migrated between that check and the Migrator's read) a newer schema of this set. Returns
 * the names it applied. Concurrent calls are safe: the Migrator takes an advisory lock on Postgres,
 * and PGlite has one connection.
 */
export async function migrateSet(db: Kysely<any>, schema: string | undefined, set: MigrationSet, engine = false): Promise<string[]> {
  checkMigrationSet(set, engine);
  if (schema !== undefined) {
    // `if not exists` still races when several processes create the schema at once: the loser's
    // unique violation means the schema is there, which is all we need.
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db).catch((err: unknown) => {
      if (errorCode(err) !== '23505' && errorCode(err) !== '42P06') throw err;
    });
  }
  await refuseNewerMigrations(db, schema, set);
  const migrator = new Migrator({
    db: withOwnSchemaIntrospection(db, schema),
    provider: { getMigrations: async () => ({ ...set.migrations }) },
    migrationTableName: set.table,
    migrationLockTableName: set.lockTable,
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    if (error instanceof Error && /previously executed migration .* is missing/.test(error.message)) {
      await refuseNewerMigrations(db, schema, set);
    }
    throw error;
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * `db` as kysely's Migrator sees it: its introspection (which the Migrator uses only to ask whether
 * its schema and tables exist) reads the catalogs for the migration schema alone. kysely's own
 * introspector reads every table of every schema, calling `has_schema_privilege` and
 * `pg_get_serial_sequence` by name, which fail with 3F000 when another session drops any schema
 * during the query (test suites, tenant schemas): a migration then failed for a schema it never
 * touched. Everything else is `db` itself.
 */
function withOwnSchemaIntrospection(db: Kysely<any>, schema: string | undefined): Kysely<any> {
  const inSchema = schema === undefined ? sql`n.nspname = any (current_schemas(false))` : sql`n.nspname = ${schema}`;
  const getTables = async () => {
    const { rows } = await sql<{ name: string; schema: string; is_view: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind = 'v' as is_view
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'f') and ${inSchema}`.execute(db);
    return rows.map((t) => ({ name: t.name, schema: t.schema, isView: t.is_view, columns: [] }));
  };
  const introspection = {
    getSchemas: async () => (await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(db)).rows.map((r) => ({ name: r.name })),
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Whether every migration of the set is applied (readiness checks). */
export async function setCurrent(db: Kysely<any>, schema: string | undefined, set: MigrationSet): Promise<boolean> {
  const applied = new Set((await appliedMigrations(db, schema, set.table)) ?? []);
  return Object.keys(set.migrations).every((name) => applied.has(name));
}

/**
 * A consumer's own tables beside the engine's, in the storage's database and schema: initialise the
 * storage (the engine's set), then apply `set` with its own migration tables. Returns the names it
 * applied. Refuses (`schema_too_new`) only a database where `set`'s table records a migration `set`
 * does not know; `invalid_options` for a set that would share another set's tables. Run it before
 * using the set's tables, in every process (it is cheap once applied).
 */
export async function applyMigrationSet(storage: SqlStorage, set: MigrationSet): Promise<string[]> {
  checkMigrationSet(set);
  await storage.init();
  try {
    return await migrateSet(storage.db as unknown as Kysely<any>, storage.schema, set);
  } catch (err) {
    if (err instanceof FlowError) throw err;
    const sqlstate = errorCode(err);
    throw new FlowError('db_error', prefixed('storage-sql', `migration set "${set.name}" failed: ${(err as Error)?.message ?? String(err)}`), {
      cause: err,
      data: { set: set.name, ...(sqlstate ? { sqlstate } : {}) },
    });
  }
}

/** Whether every migration of `set` is applied in the storage's database and schema. */
export async function migrationSetCurrent(storage: SqlStorage, set: MigrationSet): Promise<boolean> {
  checkMigrationSet(set);
  await storage.init();
  return setCurrent(storage.db as unknown as Kysely<any>, storage.schema, set);
}
