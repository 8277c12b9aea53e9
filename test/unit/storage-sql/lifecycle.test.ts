import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createSqlStorage, MIGRATIONS } from '../../../adapters/storage-sql/index.js';
import { isFlowError } from '../../../src/errors.js';
import { describeSqlBackends } from './backends.js';
import { runRecord } from './fixtures.js';

async function flowErrorOf(promise: Promise<unknown>): Promise<{ code: string; message: string; data: unknown } | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return { code: err.code, message: err.message, data: err.data };
  }
}

describeSqlBackends('sql storage: migrations and lifecycle', (backend) => {
  it('migrates once: a second storage on the same schema applies nothing and sees the data', async () => {
    const first = await backend.create();
    const run = runRecord();
    await first.runs.create(run);
    const second = await backend.create({ schema: first.schema });
    expect(await second.runs.get(run.id)).toStrictEqual(run);
    const applied = await sql<{ name: string }>`select name from ${sql.table(`${first.schema}.kysely_migration`)}`.execute(first.db);
    expect(applied.rows.map((r) => r.name).sort()).toEqual(Object.keys(MIGRATIONS));
  });

  it('lets several storages start on one new schema at once: one migrates, all work', async () => {
    const options = backend.options();
    const storages = Array.from({ length: 6 }, () => createSqlStorage({ ...options, poolSize: 2 }));
    try {
      await Promise.all(storages.map((s) => s.init()));
      const run = runRecord();
      await storages[0].runs.create(run);
      for (const s of storages) expect(await s.runs.get(run.id)).toStrictEqual(run);
      const applied = await sql<{ name: string }>`select name from ${sql.table(`${options.schema}.kysely_migration`)}`.execute(storages[1].db);
      expect(applied.rows.map((r) => r.name).sort()).toEqual(Object.keys(MIGRATIONS));
    } finally {
      await Promise.all(storages.map((s) => s.dispose()));
    }
  });

  it('refuses a database whose schema is newer than this code (schema_too_new)', async () => {
    const first = await backend.create();
    await sql`insert into ${sql.table(`${first.schema}.kysely_migration`)} (name, timestamp) values ('9999_from_the_future', '2099-01-01T00:00:00.000Z')`.execute(
      first.db,
    );
    const newer = createSqlStorage({ ...backend.options(), schema: first.schema });
    try {
      const err = await flowErrorOf(newer.init());
      expect(err?.code).toBe('schema_too_new');
      expect(err?.message).toContain('9999_from_the_future');
      expect(err?.data).toMatchObject({ unknown: ['9999_from_the_future'], known: Object.keys(MIGRATIONS) });
      // Every store call waits for init, so it fails the same way instead of touching the tables.
      expect((await flowErrorOf(newer.runs.list()))?.code).toBe('schema_too_new');
    } finally {
      await newer.dispose();
    }
  });

  it('fails every call with storage_disposed after dispose; dispose twice is fine', async () => {
    const storage = createSqlStorage(backend.options());
    await storage.init();
    await storage.dispose();
    await storage.dispose();
    expect((await flowErrorOf(storage.runs.list()))?.code).toBe('storage_disposed');
    expect((await flowErrorOf(storage.init()))?.code).toBe('storage_disposed');
  });

  it('ends a waiting watch with storage_disposed when the storage is disposed', async () => {
    // The backends' poll is 2 minutes: only dispose's wake-up can end this watch within the test.
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const seen: string[] = [];
    const watching = (async () => {
      for await (const e of storage.journal.watch(run.id)) seen.push(e.event);
    })();
    const outcome = watching.then(
      () => 'ended',
      (err: unknown) => (isFlowError(err) ? err.code : String(err)),
    );
    await storage.runs.get(run.id); // the watch has had its turn to subscribe and read
    await storage.dispose();
    expect(await outcome).toBe('storage_disposed');
    expect(seen).toEqual([]);
  });

  it('refuses ambiguous or missing driver options (invalid_options)', () => {
    const attempt = (options: object) => {
      try {
        createSqlStorage(options as never);
        return 'created';
      } catch (err) {
        return isFlowError(err) ? err.code : String(err);
      }
    };
    expect(attempt({})).toBe('invalid_options');
    expect(attempt({ databaseUrl: 'postgres://x@127.0.0.1/db', pglite: {} })).toBe('invalid_options');
    expect(attempt({ databaseUrl: 'not a url' })).toBe('invalid_options');
    expect(attempt({ databaseUrl: 'mysql://root@127.0.0.1/db' })).toBe('invalid_options');
    expect(attempt({ databaseUrl: 'postgres://x@127.0.0.1/db', poolSize: 0 })).toBe('invalid_options');
    expect(attempt({ pglite: {}, schema: '' })).toBe('invalid_options');
  });
});
