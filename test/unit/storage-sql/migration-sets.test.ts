import { sql, type Kysely } from 'kysely';
import { expect, it } from 'vitest';
import {
  applyMigrationSet,
  createSqlServiceStorage,
  createSqlStorage,
  migrationSetCurrent,
  MIGRATIONS,
  SERVICE_MIGRATIONS,
  type MigrationSet,
  type SqlStorage,
} from '../../../adapters/storage-sql/index.js';
import { migrateService, serviceSchemaCurrent } from '../../../adapters/storage-sql/service/service-migrations.js';
import { isFlowError } from '../../../src/errors.js';
import { describeSqlBackends } from './backends.js';
import { runRecord } from './fixtures.js';

// Composable migration sets (docs/storage-sql.md, "Migration sets"): the engine's, the hosted
// service's and a consumer's own live in one schema, each with its own migration tables, each
// refusing only a newer schema of its own. On PGlite and Postgres.

async function flowErrorOf(promise: Promise<unknown>): Promise<{ code: string; message: string; data: any } | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return { code: err.code, message: err.message, data: err.data };
  }
}

const FUTURE = '9999_from_the_future';

async function recordFuture(storage: SqlStorage, table: string): Promise<void> {
  await sql`insert into ${sql.table(`${storage.schema}.${table}`)} (name, timestamp) values (${FUTURE}, '2099-01-01T00:00:00.000Z')`.execute(storage.db);
}

async function applied(storage: SqlStorage, table: string): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from ${sql.table(`${storage.schema}.${table}`)} order by name`.execute(storage.db);
  return rows.rows.map((r) => r.name);
}

/** A consumer's set: one table of notes, then a column on it. */
function notesSet(overrides: Partial<MigrationSet> = {}): MigrationSet {
  return {
    name: 'notes',
    table: 'notes_migration',
    lockTable: 'notes_migration_lock',
    migrations: {
      '0001_notes': {
        async up(db: Kysely<any>) {
          await db.schema
            .createTable('notes')
            .addColumn('id', 'text', (c) => c.primaryKey())
            .execute();
        },
      },
      '0002_notes_body': {
        async up(db: Kysely<any>) {
          await db.schema.alterTable('notes').addColumn('body', 'text').execute();
        },
      },
    },
    ...overrides,
  };
}

describeSqlBackends('sql storage: migration sets', (backend) => {
  it('an engine database with unknown service migrations still opens as engine storage; only the service refuses', async () => {
    const first = await backend.create();
    const service = createSqlServiceStorage(first);
    await service.init();
    expect(await applied(first, 'svc_migration')).toEqual(Object.keys(SERVICE_MIGRATIONS).sort());
    await recordFuture(first, 'svc_migration');

    // A fresh engine storage (a new process, an older service's engine) on the same schema: opens and works.
    const engine = await backend.create({ schema: first.schema });
    const run = runRecord();
    await engine.runs.create(run);
    expect(await engine.runs.get(run.id)).toStrictEqual(run);
    expect(await applied(engine, 'kysely_migration')).toEqual(Object.keys(MIGRATIONS).sort());

    // The service's own set refuses, naming its set, table and the unknown name.
    const older = createSqlServiceStorage(engine);
    const err = await flowErrorOf(older.init());
    expect(err).toMatchObject({ code: 'schema_too_new', data: { set: 'hosted service', table: 'svc_migration', unknown: [FUTURE] } });
    expect(err?.message).toContain(FUTURE);
    expect(err?.message).toContain('hosted service');
    expect(await older.ready()).toBe(false);
    // Its refusal did not touch the engine: runs are still readable.
    expect(await engine.runs.get(run.id)).toStrictEqual(run);
  });

  it('a database with unknown engine migrations: the service set applies and is current on its own; the engine refuses', async () => {
    const first = await backend.create();
    await recordFuture(first, 'kysely_migration');
    const db = first.db as unknown as Kysely<any>;
    // The service's set looks only at svc_migration: an unknown engine migration does not stop it.
    expect(await migrateService(db, first.schema)).toEqual(Object.keys(SERVICE_MIGRATIONS).sort());
    expect(await serviceSchemaCurrent(db, first.schema)).toBe(true);
    expect(await migrateService(db, first.schema)).toEqual([]);

    // The engine's set refuses, naming its own set; so does a service storage over it (it needs the engine's tables).
    const newer = createSqlStorage({ ...backend.options(), schema: first.schema });
    try {
      const err = await flowErrorOf(newer.init());
      expect(err).toMatchObject({
        code: 'schema_too_new',
        data: { set: 'engine', table: 'kysely_migration', unknown: [FUTURE], known: Object.keys(MIGRATIONS) },
      });
      const service = createSqlServiceStorage(newer);
      expect((await flowErrorOf(service.init()))?.code).toBe('schema_too_new');
    } finally {
      await newer.dispose();
    }
  });

  it("a consumer's set: applied once in the storage's schema, beside the engine's and the service's", async () => {
    const storage = await backend.create();
    const set = notesSet();
    expect(await migrationSetCurrent(storage, set)).toBe(false);
    expect(await applyMigrationSet(storage, set)).toEqual(['0001_notes', '0002_notes_body']);
    expect(await applyMigrationSet(storage, set)).toEqual([]);
    expect(await migrationSetCurrent(storage, set)).toBe(true);
    await createSqlServiceStorage(storage).init();
    // Each set recorded only its own names in its own table.
    expect(await applied(storage, 'notes_migration')).toEqual(['0001_notes', '0002_notes_body']);
    expect(await applied(storage, 'kysely_migration')).toEqual(Object.keys(MIGRATIONS).sort());
    expect(await applied(storage, 'svc_migration')).toEqual(Object.keys(SERVICE_MIGRATIONS).sort());
    // The table is in the storage's schema, usable through the storage's kysely and its transactions.
    const db = storage.db as unknown as Kysely<any>;
    await storage.transaction(async (tx) => {
      await (tx.db as unknown as Kysely<any>).insertInto('notes').values({ id: 'a', body: 'one' }).execute();
    });
    expect(await db.selectFrom('notes').selectAll().execute()).toEqual([{ id: 'a', body: 'one' }]);

    // A later version of the set adds a migration: only that one is applied.
    const grown = notesSet({
      migrations: {
        ...set.migrations,
        '0003_notes_index': {
          async up(d: Kysely<any>) {
            await d.schema.createIndex('notes_by_body').on('notes').column('body').execute();
          },
        },
      },
    });
    expect(await applyMigrationSet(storage, grown)).toEqual(['0003_notes_index']);
    // And the older version now refuses that database, naming the one it does not know.
    const err = await flowErrorOf(applyMigrationSet(storage, set));
    expect(err).toMatchObject({ code: 'schema_too_new', data: { set: 'notes', table: 'notes_migration', unknown: ['0003_notes_index'] } });
    // Neither the engine nor the service looks at the notes table.
    const engine = await backend.create({ schema: storage.schema });
    await engine.runs.create(runRecord());
    const service = createSqlServiceStorage(engine);
    await service.init();
    expect(await service.ready()).toBe(true);
  });

  it('a failing migration of a set is db_error and leaves none of it applied; the fixed set applies', async () => {
    const storage = await backend.create();
    const broken = notesSet({
      migrations: {
        ...notesSet().migrations,
        '0002_notes_body': {
          async up(db: Kysely<any>) {
            await sql`select * from no_such_table_here`.execute(db);
          },
        },
      },
    });
    const err = await flowErrorOf(applyMigrationSet(storage, broken));
    expect(err).toMatchObject({ code: 'db_error', data: { set: 'notes', sqlstate: '42P01' } });
    // kysely runs a set in one transaction on Postgres and PGlite: 0001 was rolled back with 0002.
    expect(await applied(storage, 'notes_migration')).toEqual([]);
    expect(await applyMigrationSet(storage, notesSet())).toEqual(['0001_notes', '0002_notes_body']);
  });

  it("refuses a set that would share another set's tables or has bad names (invalid_options)", async () => {
    const storage = await backend.create();
    const bad: Partial<MigrationSet>[] = [
      { table: 'kysely_migration' },
      { lockTable: 'kysely_migration_lock' },
      { table: 'same', lockTable: 'same' },
      { table: 'Notes' },
      { table: 'notes; drop table runs' },
      { table: 'x'.repeat(64) },
      { name: '' },
      { migrations: {} },
    ];
    for (const overrides of bad) {
      const err = await flowErrorOf(applyMigrationSet(storage, notesSet(overrides)));
      expect(err?.code, JSON.stringify(overrides)).toBe('invalid_options');
    }
    expect(await applied(storage, 'kysely_migration')).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it('several storages apply the engine, service and a consumer set on one new schema at once: each applied once', async () => {
    const options = backend.options();
    const storages = Array.from({ length: 4 }, () => createSqlStorage({ ...options, poolSize: 2 }));
    try {
      const results = await Promise.all(
        storages.map(async (s) => {
          await createSqlServiceStorage(s).init();
          return applyMigrationSet(s, notesSet());
        }),
      );
      // Exactly one caller applied the set's migrations; the others found them applied.
      expect(results.flat().sort()).toEqual(['0001_notes', '0002_notes_body']);
      expect(await applied(storages[0], 'notes_migration')).toEqual(['0001_notes', '0002_notes_body']);
      expect(await applied(storages[0], 'svc_migration')).toEqual(Object.keys(SERVICE_MIGRATIONS).sort());
    } finally {
      await Promise.all(storages.map((s) => s.dispose()));
    }
  });
});
