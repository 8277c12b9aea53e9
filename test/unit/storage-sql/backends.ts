import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { PGliteInstance } from '../../../adapters/storage-sql/driver-types.js';
import { createSqlStorage, type SqlStorage, type SqlStorageOptions } from '../../../adapters/storage-sql/index.js';
import { PGliteThread } from '../../../adapters/storage-sql/pglite-thread.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../helpers/postgres.js';

export interface Backend {
  kind: 'pglite' | 'postgres';
  /**
   * A fresh storage in its own schema (or `options.schema`), initialised; disposed after the test.
   * Its watch safety-net poll is 2 minutes, so a watch test passes only through notifications.
   */
  create(options?: Partial<SqlStorageOptions>): Promise<SqlStorage>;
  /** Same connection settings, no init, not tracked: for error and lifecycle tests. */
  options(): SqlStorageOptions;
}

/**
 * Run the same tests on PGlite in this thread and in a thread of its own (what `{ pglite: {} }` and
 * `{ pglite: { dataDir } }` open: pglite-thread.ts), one in-memory instance per file and a schema per
 * storage, and on Postgres (TEST_DATABASE_URL, a schema per storage, all dropped after the file).
 */
export function describeSqlBackends(title: string, body: (backend: Backend) => void): void {
  const variants: [string, () => Promise<PGliteInstance>][] = [
    ['pglite', async () => (await PGlite.create()) as unknown as PGliteInstance],
    [
      'pglite thread',
      async () => {
        const thread = new PGliteThread(undefined);
        await thread.waitReady;
        return thread;
      },
    ],
  ];
  for (const [variant, open] of variants) {
    describe(`${title} [${variant}]`, () => {
      let pglite: PGliteInstance;
      const storages: SqlStorage[] = [];
      beforeAll(async () => {
        pglite = await open();
      });
      afterEach(async () => {
        await Promise.all(storages.splice(0).map((s) => s.dispose()));
      });
      afterAll(async () => {
        await pglite?.close();
      });
      const options = (): SqlStorageOptions => ({ pglite, schema: uniqueSchemaName() });
      body({
        kind: 'pglite',
        options,
        async create(extra = {}) {
          const storage = createSqlStorage({ ...options(), watchPollMs: 120_000, ...extra });
          storages.push(storage);
          await storage.init();
          return storage;
        },
      });
    });
  }

  describePostgres(`${title} [postgres]`, (url) => {
    const open: SqlStorage[] = [];
    const schemas = new Set<string>();
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.dispose()));
    });
    afterAll(async () => {
      for (const schema of schemas) await dropSchema(url, schema);
    });
    const options = (): SqlStorageOptions => {
      const schema = uniqueSchemaName();
      schemas.add(schema);
      return { databaseUrl: url, schema, poolSize: 4 };
    };
    body({
      kind: 'postgres',
      options,
      async create(extra = {}) {
        if (extra.schema) schemas.add(extra.schema);
        const storage = createSqlStorage({ ...options(), watchPollMs: 120_000, ...extra });
        open.push(storage);
        await storage.init();
        return storage;
      },
    });
  });
}
