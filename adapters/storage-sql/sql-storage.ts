import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, type PostgresPool } from 'kysely';
import type pg from 'pg';
import { FlowError, prefixed } from '../../src/errors.js';
import type { Storage } from '../../src/ports/storage.js';
import { channelName, PgJournalNotifier, PGliteJournalNotifier, type JournalNotifier } from './journal-notifier.js';
import { migrateToLatest } from './migrations.js';
import { connectFromPool, connectFromUrl } from './pg-connection.js';
import { borrowPGlite, isPGliteInstance, openPGlite } from './pglite-connection.js';
import type { SqlDatabase } from './schema.js';
import type { SqlContext } from './sql-context.js';
import { sqlArtifactStore } from './sql-artifacts.js';
import { scrub, toFlowError, unreachable, type SqlTarget } from './sql-errors.js';
import { sqlJournalStore } from './sql-journal.js';
import { sqlRunStore } from './sql-runs.js';
import { sqlDeployStore, sqlSpecStore } from './sql-specs.js';

export interface SqlStorageOptions {
  /** `postgres://user:password@host:port/database`: use Postgres through a pg pool the adapter owns. */
  databaseUrl?: string;
  /** Use Postgres through this pool. It stays the caller's: dispose does not end it. */
  pool?: pg.Pool;
  /**
   * Use embedded PGlite: `{ dataDir }` keeps the database in that folder (created if missing;
   * `<dataDir>.lock` guards it against a second process), `{}` keeps it in memory, and a PGlite
   * instance is used as given (and not closed on dispose).
   */
  pglite?: { dataDir?: string } | PGlite;
  /**
   * Postgres schema holding the tables (created if missing). Default: none, i.e. unqualified names
   * resolved by the connection's search_path (normally `public`). Tests use one schema per run.
   */
  schema?: string;
  /** Size of the pg pool created from `databaseUrl`. Default 10. */
  poolSize?: number;
  /** How long to wait for a Postgres connection before `db_unreachable`. Default 10000 ms. */
  connectTimeoutMs?: number;
  /** Safety-net re-read interval of a waiting journal watcher; notifications are the fast path. Default 1000 ms. */
  watchPollMs?: number;
}

export interface SqlStorage extends Storage {
  readonly driver: 'postgres' | 'pglite';
  /** The Postgres schema holding the tables, when one was configured. */
  readonly schema: string | undefined;
  /** The kysely instance (schema-qualified), for the hosted service's own tables and for tests. */
  readonly db: Kysely<SqlDatabase>;
  init(): Promise<void>;
  dispose(): Promise<void>;
}

interface Driver {
  kysely: Kysely<SqlDatabase>;
  target: SqlTarget;
  password: string | undefined;
  notifier: JournalNotifier;
  close(): Promise<void>;
}

function openDriver(options: SqlStorageOptions, channel: string, mapError: (target: SqlTarget, password: string | undefined) => (err: unknown) => Error): Driver {
  const chosen = [options.databaseUrl !== undefined, options.pool !== undefined, options.pglite !== undefined].filter(Boolean).length;
  if (chosen !== 1) {
    throw new FlowError(
      'invalid_options',
      prefixed('storage-sql', `give exactly one of databaseUrl, pool or pglite (got ${chosen === 0 ? 'none' : 'several'})`),
    );
  }
  if (options.pglite !== undefined) {
    const conn = isPGliteInstance(options.pglite) ? borrowPGlite(options.pglite) : openPGlite(options.pglite);
    const kysely = new Kysely<SqlDatabase>({ dialect: new PGliteDialect({ pglite: async () => conn.forKysely() }) });
    return {
      kysely,
      target: { driver: 'pglite', ...(conn.dataDir ? { dataDir: conn.dataDir } : {}) },
      password: undefined,
      notifier: new PGliteJournalNotifier(() => conn.instance(), channel),
      close: () => conn.close(),
    };
  }
  const conn = options.pool !== undefined ? connectFromPool(options.pool) : connectFromUrl(options.databaseUrl as string, options);
  // Kysely's destroy() ends the pool it drives; a borrowed pool is handed over behind a no-op end().
  const pool: PostgresPool = conn.owned
    ? conn.pool
    : { connect: () => conn.pool.connect(), end: async () => {}, options: conn.pool.options };
  const kysely = new Kysely<SqlDatabase>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    target: conn.target,
    password: conn.password,
    notifier: new PgJournalNotifier(conn.clientConfig, channel, mapError(conn.target, conn.password)),
    close: async () => {},
  };
}

/**
 * SQL storage for every engine storage port: kysely over embedded PGlite or a real Postgres, one
 * schema and one migration set for both (docs/storage-sql.md). Migrations run in `init()`; every
 * store method also waits for it, so forgetting init is harmless.
 */
export function createSqlStorage(options: SqlStorageOptions): SqlStorage {
  const schema = options.schema;
  if (schema !== undefined && (typeof schema !== 'string' || schema.length === 0 || schema.length > 63)) {
    throw new FlowError('invalid_options', prefixed('storage-sql', 'schema must be a non-empty name of at most 63 characters'));
  }
  const channel = channelName(schema);
  const driver = openDriver(options, channel, (target, password) => (err) => unreachable(target, err, password));
  const db = schema === undefined ? driver.kysely : driver.kysely.withSchema(schema);
  const mapError = (err: unknown, op: string) => toFlowError(err, op, driver.target, driver.password);

  let initPromise: Promise<void> | undefined;
  let disposed: Promise<void> | undefined;

  const init = (): Promise<void> => {
    if (disposed) return Promise.reject(new FlowError('storage_disposed', prefixed('storage-sql', 'storage was disposed')));
    initPromise ??= migrateToLatest(db, schema)
      .then(() => undefined)
      .catch((err: unknown) => {
        initPromise = undefined; // let a later call retry (e.g. the database came up)
        throw mapError(err, 'init (migrations)');
      });
    return initPromise;
  };

  const ctx: SqlContext = {
    db,
    channel,
    notifier: driver.notifier,
    watchPollMs: options.watchPollMs ?? 1000,
    async guard(op, fn) {
      await init();
      try {
        return await fn();
      } catch (err) {
        throw mapError(err, op);
      }
    },
  };

  const flags = { crossProcessWatch: driver.target.driver === 'postgres', durable: driver.target.driver === 'postgres' || driver.target.dataDir !== undefined };

  return {
    name: `sql-${driver.target.driver}`,
    driver: driver.target.driver,
    schema,
    flags,
    db,
    specs: sqlSpecStore(ctx),
    deploys: sqlDeployStore(ctx),
    runs: sqlRunStore(ctx),
    journal: sqlJournalStore(ctx),
    artifacts: sqlArtifactStore(ctx),
    init,
    dispose() {
      disposed ??= (async () => {
        await initPromise?.catch(() => {});
        await driver.notifier.close();
        try {
          await driver.kysely.destroy();
        } catch (err) {
          throw new FlowError('db_error', prefixed('storage-sql', `closing the connection failed: ${scrub(String(err), driver.password)}`));
        } finally {
          await driver.close();
        }
      })();
      return disposed;
    },
  };
}
