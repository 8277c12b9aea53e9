import { PGlite } from '@electric-sql/pglite';
import { afterAll } from 'vitest';
import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { describeServiceStorageConformance } from '../../testing/service-storage-conformance.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

// The service storage conformance suite on both SQL drivers. Each `create` is a fresh schema over
// its own engine SqlStorage; `reopen` is a second one (its own pool on Postgres) over the same schema.

const engines = new WeakMap<ServiceStorage, SqlStorage>();
const service = (engine: SqlStorage) => {
  const s = createSqlServiceStorage(engine);
  engines.set(s, engine);
  // The suite disposes the service storage; the engine storage under it goes with it here.
  const dispose = s.dispose.bind(s);
  s.dispose = async () => {
    await dispose();
    await engine.dispose();
  };
  return s;
};

let pglite: Promise<PGlite> | undefined;
afterAll(async () => {
  await (await pglite)?.close();
});

describeServiceStorageConformance({
  name: 'sql (PGlite)',
  create: async () => service(createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema: uniqueSchemaName('svc_t') })),
  reopen: async (s) => service(createSqlStorage({ pglite: await pglite!, schema: engines.get(s)!.schema })),
});

describePostgres('service storage (Postgres)', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  describeServiceStorageConformance({
    name: 'sql (Postgres)',
    concurrentTransactions: true,
    create: async () => {
      const schema = uniqueSchemaName('svc_t');
      schemas.push(schema);
      return service(createSqlStorage({ databaseUrl: url, schema, poolSize: 3 }));
    },
    reopen: async (s) => service(createSqlStorage({ databaseUrl: url, schema: engines.get(s)!.schema, poolSize: 3 })),
  });
});
