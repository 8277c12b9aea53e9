import { PGlite } from '@electric-sql/pglite';
import { afterAll } from 'vitest';
import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { describeStorageConformance } from '../../testing/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

// The storage conformance suite on both SQL drivers. Each `create` is a fresh schema; `reopen` is a
// second storage (its own pool on Postgres) over the same schema, so writes are read independently.

let pglite: Promise<PGlite> | undefined;
afterAll(async () => {
  await (await pglite)?.close();
});

describeStorageConformance({
  name: 'sql (PGlite)',
  create: async () => createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema: uniqueSchemaName() }),
  reopen: async (storage: Storage) => createSqlStorage({ pglite: await pglite!, schema: (storage as SqlStorage).schema }),
});

describePostgres('sql (Postgres)', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  describeStorageConformance({
    name: 'sql (Postgres)',
    create: async () => {
      const schema = uniqueSchemaName();
      schemas.push(schema);
      return createSqlStorage({ databaseUrl: url, schema, poolSize: 2 });
    },
    reopen: async (storage: Storage) => createSqlStorage({ databaseUrl: url, schema: (storage as SqlStorage).schema, poolSize: 2 }),
  });
});
