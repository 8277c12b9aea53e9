import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgBossQueue, type PgBossQueue } from '../../adapters/queue-pgboss/index.js';
import { describeQueueConformance } from '../../testing/index.js';
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
  transaction: async (fn) => (await (pglite ??= PGlite.create())).transaction((tx) => fn({ executeSql: (text, values) => tx.query(text, values) })),
});

describePostgres('queue conformance on Postgres', (url) => {
  const schema = uniqueSchemaName('q_pgboss');
  afterAll(() => dropSchema(url, schema));
  describeQueueConformance({
    name: 'pg-boss on Postgres',
    create: async () => createPgBossQueue({ databaseUrl: url, schema }),
    crash: (q) => (q as PgBossQueue).crash(),
    transaction: async (fn) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('BEGIN');
        try {
          const result = await fn({ executeSql: (text, values) => client.query(text, values) });
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      } finally {
        await client.end();
      }
    },
  });
});

describe('createPgBossQueue options', () => {
  it('takes retryLimit 0 (never redeliver) and refuses a negative or fractional one', () => {
    expect(() => createPgBossQueue({ databaseUrl: 'postgres://127.0.0.1:1/none', retryLimit: 0 })).not.toThrow();
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => createPgBossQueue({ databaseUrl: 'postgres://127.0.0.1:1/none', retryLimit: bad })).toThrow(
        /retryLimit must be a whole number of at least 0/,
      );
    }
  });
});

describe('pg-boss backlog', () => {
  it('a slot that handled a message fetches the next at once: a backlog sent before the worker drains without waiting out the poll interval', async () => {
    const db = await PGlite.create();
    // A 60 s poll: were each slot to sleep it after every message, 12 messages on 2 slots would take 6 minutes.
    const q = createPgBossQueue({ pglite: db, schema: 'backlog_pgboss', pollingIntervalSeconds: 60 });
    try {
      for (let i = 0; i < 12; i++) await q.send('backlog', { i });
      const seen = new Set<number>();
      let all!: () => void;
      const done = new Promise<void>((r) => (all = r));
      const w = await q.work('backlog', { concurrency: 2 }, async (m) => {
        seen.add(m.data.i as number);
        if (seen.size === 12) all();
      });
      await done;
      await w.stop();
      expect([...seen].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    } finally {
      await q.stop();
      await db.close();
    }
  }, 120_000);
});
