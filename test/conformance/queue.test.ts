import { PGlite } from '@electric-sql/pglite';
import { afterAll } from 'vitest';
import { createPgBossQueue, type PgBossQueue } from '../../adapters/queue-pgboss/index.js';
import { describeQueueConformance } from '../../adapters/testing/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

// The Queue suite (flowctl/testing) on the pg-boss adapter: on PGlite (two queue instances over one
// embedded database, as the API and the worker of one process) and on Postgres (two instances with
// pools of their own, as two processes), including redelivery after a crashed instance.

let pglite: Promise<PGlite> | undefined;
afterAll(async () => {
  await (await pglite)?.close();
});

describeQueueConformance({
  name: 'pg-boss on PGlite',
  create: async () => createPgBossQueue({ pglite: await (pglite ??= PGlite.create()), schema: 'conf_pgboss' }),
  crash: (q) => (q as PgBossQueue).crash(),
});

describePostgres('queue conformance on Postgres', (url) => {
  const schema = uniqueSchemaName('q_pgboss');
  afterAll(() => dropSchema(url, schema));
  describeQueueConformance({
    name: 'pg-boss on Postgres',
    create: async () => createPgBossQueue({ databaseUrl: url, schema }),
    crash: (q) => (q as PgBossQueue).crash(),
  });
});
