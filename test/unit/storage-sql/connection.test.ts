import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlStorage, sqlStorageFromEnv } from '../../../adapters/storage-sql/index.js';
import { isFlowError, type FlowError } from '../../../src/errors.js';
import { describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { runRecord } from './fixtures.js';

async function flowError(promise: Promise<unknown>): Promise<FlowError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFlowError(err)) throw new Error(`expected a FlowError, got ${String(err)}`);
  return err;
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('sql storage: unreachable Postgres', () => {
  it('fails with db_unreachable naming host, port and database, never the password', async () => {
    const port = await closedPort();
    const password = 'S3cret-pass%word';
    const storage = createSqlStorage({ databaseUrl: `postgres://flow_user:${encodeURIComponent(password)}@127.0.0.1:${port}/flow_db` });
    try {
      const err = await flowError(storage.init());
      expect(err.code).toBe('db_unreachable');
      expect(err.message).toContain(`127.0.0.1:${port}`);
      expect(err.message).toContain('"flow_db"');
      expect(err.data).toMatchObject({ driver: 'postgres', host: '127.0.0.1', port, database: 'flow_db', user: 'flow_user' });
      const everything = `${err.message} ${err.stack} ${JSON.stringify(err.toJSON())} ${String(err.cause ?? '')}`;
      expect(everything).not.toContain('S3cret');
      expect(everything).not.toContain(encodeURIComponent(password));
      // A store call fails the same way (it waits for init, which is retried, not cached as failed).
      expect((await flowError(storage.runs.get(runRecord().id))).code).toBe('db_unreachable');
    } finally {
      await storage.dispose();
    }
  });
});

describePostgres('sql storage: Postgres connections', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  const withAppName = (name: string) => `${url}${url.includes('?') ? '&' : '?'}application_name=${name}`;
  const connectionsOf = async (name: string) =>
    Number((await pgQuery<{ n: string }>(url, 'select count(*)::text as n from pg_stat_activity where application_name = $1', [name]))[0].n);

  it('fails with db_unreachable when the database does not exist', async () => {
    const target = new URL(url);
    target.pathname = `/flowctl_missing_${randomBytes(3).toString('hex')}`;
    const storage = createSqlStorage({ databaseUrl: target.toString() });
    try {
      const err = await flowError(storage.init());
      expect(err.code).toBe('db_unreachable');
      expect(err.message).toContain(target.pathname.slice(1));
    } finally {
      await storage.dispose();
    }
  });

  it('closes its pool and its LISTEN connection on dispose', async () => {
    const app = `flowctl_dispose_${randomBytes(4).toString('hex')}`;
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const storage = createSqlStorage({ databaseUrl: withAppName(app), schema, poolSize: 3 });
    const run = runRecord();
    await storage.runs.create(run);
    const controller = new AbortController();
    const watching = (async () => {
      for await (const _ of storage.journal.watch(run.id, { signal: controller.signal })) {
        // no entries are appended; the watch only holds the LISTEN connection open
      }
    })();
    await Promise.all([storage.runs.get(run.id), storage.runs.list(), storage.journal.read(run.id)]);
    expect(await connectionsOf(app)).toBeGreaterThanOrEqual(2); // pool + LISTEN
    controller.abort();
    await watching;
    await storage.dispose();
    // The server drops a backend shortly after the client's Terminate message: wait for it (capped).
    await waitUntil(async () => (await connectionsOf(app)) === 0, { what: `the server to drop the connections of ${app}` });
  });

  it('leaves a pool it was given open on dispose', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const storage = createSqlStorage({ pool, schema });
    try {
      const run = runRecord();
      await storage.runs.create(run); // a pool of one still serves queries: LISTEN has its own client
      const watch = storage.journal.watch(run.id, { signal: AbortSignal.timeout(100) });
      for await (const _ of watch) break;
      await storage.dispose();
      const rows = await pool.query(`select count(*)::int as n from "${schema}".runs`);
      expect(rows.rows[0].n).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('sqlStorageFromEnv picks Postgres from DATABASE_URL and a schema from FLOWCTL_DB_SCHEMA', async () => {
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const storage = sqlStorageFromEnv({ env: { DATABASE_URL: url, FLOWCTL_DB_SCHEMA: schema }, defaultDataDir: '/nonexistent/never-used' });
    try {
      expect(storage.driver).toBe('postgres');
      expect(storage.flags).toEqual({ crossProcessWatch: true, durable: true, appendUpdatesRun: true });
      await storage.runs.create(runRecord());
      const rows = await pgQuery<{ n: number }>(url, `select count(*)::int as n from "${schema}".runs`);
      expect(rows[0].n).toBe(1);
    } finally {
      await storage.dispose();
    }
    expect(existsSync('/nonexistent')).toBe(false);
  });
});

describe('sql storage: PGlite data folder', () => {
  it('is locked against a second user while open; a lock left by a dead process is taken over', async () => {
    const root = await mkdtemp(join(tmpdir(), 'flowctl-sql-lock-'));
    const dataDir = join(root, 'db');
    try {
      const first = sqlStorageFromEnv({ env: {}, defaultDataDir: dataDir });
      expect(first.driver).toBe('pglite');
      expect(first.flags).toEqual({ crossProcessWatch: false, durable: true, appendUpdatesRun: true });
      const run = runRecord();
      await first.runs.create(run);
      const second = (() => {
        try {
          createSqlStorage({ pglite: { dataDir } });
          return undefined;
        } catch (err) {
          return err as FlowError;
        }
      })();
      expect(second?.code).toBe('db_locked');
      expect(second?.message).toContain(String(process.pid));
      await first.dispose();
      expect(existsSync(`${dataDir}.lock`)).toBe(false);

      // SIGKILL leaves the lock behind: the pid in it is dead, so the next open takes over.
      const dead = spawn(process.execPath, ['-e', '0']);
      await new Promise((resolve) => dead.on('exit', resolve));
      writeFileSync(`${dataDir}.lock`, String(dead.pid));
      const third = createSqlStorage({ pglite: { dataDir } });
      try {
        expect(await third.runs.get(run.id)).toStrictEqual(run);
      } finally {
        await third.dispose();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('an unused storage creates neither the data folder nor a leftover lock', async () => {
    const root = await mkdtemp(join(tmpdir(), 'flowctl-sql-lazy-'));
    try {
      const storage = sqlStorageFromEnv({ env: {}, cwd: root });
      expect(existsSync(join(root, '.flowctl/db.lock'))).toBe(true);
      await storage.dispose();
      expect(existsSync(join(root, '.flowctl/db'))).toBe(false);
      expect(existsSync(join(root, '.flowctl/db.lock'))).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('the REST launcher over an unreachable Postgres', () => {
  it('answers 503 db_unreachable with Retry-After, and names neither the host nor the user (they go to the log)', async () => {
    const { createEngine } = await import('../../../src/engine/engine.js');
    const { createLauncher } = await import('../../../src/launcher/launcher.js');
    const { compileFlow } = await import('../../../src/flow/compile.js');
    const { builtinTools } = await import('../../../src/tools/builtins/index.js');
    const { createToolRegistry } = await import('../../../src/tools/registry.js');
    const { parse } = await import('yaml');
    const port = await closedPort();
    const storage = createSqlStorage({ databaseUrl: `postgres://flow_user@127.0.0.1:${port}/flow_db` });
    const tools = createToolRegistry(builtinTools());
    const compiled = compileFlow(
      parse('name: hi\nsteps:\n  - id: t\n    tool: core/template@1\n    args: {template: hi}\noutput:\n  text: ${steps.t.output.text}\n'),
      { file: 'hi.yaml', tools },
    );
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    const logged: string[] = [];
    const launcher = createLauncher({
      engine: createEngine({ storage, tools }),
      flows: [{ name: 'hi', spec: compiled.spec }],
      logger: { error: (m: string, f?: unknown) => logged.push(`${m} ${JSON.stringify(f)}`), warn: () => {}, info: () => {} } as never,
    });
    try {
      for (const req of [
        new Request('http://127.0.0.1/runs/00000000-0000-4000-8000-000000000000'),
        new Request('http://127.0.0.1/flows/hi/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"inputs": {}}' }),
      ]) {
        const res = await launcher.fetch(req);
        const text = await res.text();
        expect([res.status, JSON.parse(text).error, res.headers.get('retry-after')], text).toEqual([503, 'db_unreachable', '2']);
        expect(text).not.toContain('127.0.0.1');
        expect(text).not.toContain('flow_user');
      }
      expect(logged.join('\n')).toContain(`127.0.0.1:${port}`);
    } finally {
      await storage.dispose();
    }
  });
});

describePostgres('sql storage: migrations beside schemas other sessions create and drop', (url) => {
  it('initialising fresh schemas never fails on a schema another session drops meanwhile', async () => {
    // Another session creates and drops schemas as fast as it can (a test suite, tenant schemas), while
    // fresh stores migrate. kysely's own introspection read every schema and failed with 3F000 naming
    // one of these in a few of 30 (measured: 3 of 20 with five retries); migrations read only their own.
    const churn = new pg.Client({ connectionString: url });
    await churn.connect();
    const tag = `churn_${randomBytes(3).toString('hex')}`;
    let stop = false;
    const loop = (async () => {
      for (let i = 0; i < 1_000_000 && !stop; i++) {
        await churn.query(`create schema ${tag}_${i % 4}; create table ${tag}_${i % 4}.t (a serial primary key)`).catch(() => {});
        await churn.query(`drop schema if exists ${tag}_${i % 4} cascade`).catch(() => {});
      }
    })();
    const failures: string[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        const schema = uniqueSchemaName('mig_churn');
        const storage = createSqlStorage({ databaseUrl: url, schema });
        try {
          await storage.init();
          await storage.runs.create(runRecord());
        } catch (err) {
          failures.push(String((err as Error)?.message ?? err));
        } finally {
          await storage.dispose();
          await dropSchema(url, schema);
        }
      }
    } finally {
      stop = true;
      await loop;
      for (let i = 0; i < 4; i++) await churn.query(`drop schema if exists ${tag}_${i} cascade`);
      await churn.end();
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
