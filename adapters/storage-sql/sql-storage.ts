import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, type PostgresPool } from 'kysely';
import type pg from 'pg';
import type { PGliteInstance, SqlClientConfig, SqlConnectionInfo, SqlPool } from './driver-types.js';
import { sha256Hex } from '../../src/canonical.js';
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
import { GroupCommit } from './group-commit.js';
import { appendOne, appendStatement, sqlJournalStore, type AppendItem } from './sql-journal.js';
import { createOne, createStatement, sqlRunStore, type CreateItem } from './sql-runs.js';
import { sqlDeployStore, sqlSpecStore } from './sql-specs.js';

export interface SqlStorageOptions {
  /** `postgres://user:password@host:port/database`: use Postgres through a pg pool the adapter owns. */
  databaseUrl?: string;
  /** Use Postgres through this pool. It stays the caller's: dispose does not end it. */
  pool?: SqlPool;
  /**
   * Use embedded PGlite: `{ dataDir }` keeps the database in that folder (created if missing;
   * `<dataDir>.lock` guards it against a second process), `{}` keeps it in memory, and a PGlite
   * instance is used as given (and not closed on dispose). PGlite runs Postgres as WebAssembly in
   * the thread that calls it; the adapter opens it in a worker thread of its own, so statements do
   * not hold the caller's event loop (`thread: false`: in the caller's thread).
   */
  pglite?: { dataDir?: string; thread?: boolean } | PGliteInstance;
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
  /**
   * Group commit (docs/storage-sql.md): journal appends and run creates of concurrent runs that wait
   * at the same time go to the database together, one statement and one commit for all. Each caller
   * still resumes only after its own write committed. Default true; false sends each write alone.
   */
  groupCommit?: boolean;
  /**
   * Postgres: send the journal append and run create statements as named prepared statements (parsed
   * and planned once per connection). Default true; false for a connection pooler that cannot keep
   * them (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

export interface SqlStorage extends Storage {
  readonly driver: 'postgres' | 'pglite';
  /** The Postgres schema holding the tables, when one was configured. */
  readonly schema: string | undefined;
  /** The kysely instance (schema-qualified), for the hosted service's own tables and for tests. */
  readonly db: Kysely<SqlDatabase>;
  /**
   * The database itself, for an adapter that keeps its own tables beside these (the pg-boss queue):
   * the PGlite instance, or the Postgres connection settings (for a pool of its own).
   */
  connection(): SqlConnectionInfo;
  init(): Promise<void>;
  dispose(): Promise<void>;
  /**
   * Run `fn` in one database transaction (docs/storage-sql.md, "Transactions"). `tx` has the same
   * stores over the transaction, and `tx.db` is the transaction's kysely for a consumer's own
   * tables. fn's writes commit together when it resolves, and none of them when it throws (its
   * error is rethrown as it is); other connections do not see them before the commit.
   * - Inside fn, use `tx` only: a call on this storage from fn's async context fails at once with
   *   `transaction_in_progress` (on PGlite, one connection, it would otherwise wait for the
   *   transaction that waits for it). Calls from elsewhere run normally; on PGlite they queue
   *   behind the transaction.
   * - `tx.transaction` (nesting) fails with `nested_transaction`; `tx` used after fn settled fails
   *   with `transaction_closed`; `tx.journal.watch` fails with `unsupported_in_transaction`.
   */
  transaction<T>(fn: (tx: SqlStorageTransaction) => Promise<T>): Promise<T>;
}

/** The storage as seen inside `SqlStorage.transaction(fn)`. */
export type SqlStorageTransaction = Omit<SqlStorage, 'init' | 'dispose' | 'transaction' | 'connection'> & {
  init(): Promise<void>;
  dispose(): Promise<void>;
  transaction(): Promise<never>;
};

export type { SqlConnectionInfo } from './driver-types.js';

/** Group commit: batches in flight at once on Postgres (each on its own pool connection; PGlite has one). */
const GROUP_COMMIT_IN_FLIGHT = 2;
/** At most this many writes, and about this many bytes of JSON, in one statement. */
const GROUP_COMMIT_MAX_ITEMS = 128;
const GROUP_COMMIT_MAX_BYTES = 1 << 20;

interface Driver {
  kysely: Kysely<SqlDatabase>;
  connection: () => SqlConnectionInfo;
  /** Postgres: the pg pool, for the group-commit statements run as named prepared statements. */
  pool?: pg.Pool;
  target: SqlTarget;
  password: string | undefined;
  notifier: JournalNotifier;
  close(): Promise<void>;
}

function openDriver(
  options: SqlStorageOptions,
  channel: string,
  mapError: (target: SqlTarget, password: string | undefined) => (err: unknown) => Error,
): Driver {
  const chosen = [options.databaseUrl !== undefined, options.pool !== undefined, options.pglite !== undefined].filter(Boolean).length;
  if (chosen !== 1) {
    throw new FlowError(
      'invalid_options',
      prefixed('storage-sql', `give exactly one of databaseUrl, pool or pglite (got ${chosen === 0 ? 'none' : 'several'})`),
    );
  }
  if (options.pglite !== undefined) {
    const conn = isPGliteInstance(options.pglite) ? borrowPGlite(options.pglite as unknown as PGlite) : openPGlite(options.pglite);
    // kysely's PGlite adapter declares one connection, so kysely lends it to one holder at a time (a
    // query, or a whole transaction): a concurrent caller waits instead of running inside another
    // caller's transaction (test/unit/storage-sql/transaction.test.ts).
    const kysely = new Kysely<SqlDatabase>({ dialect: new PGliteDialect({ pglite: async () => conn.forKysely() }) });
    return {
      kysely,
      target: { driver: 'pglite', ...(conn.dataDir ? { dataDir: conn.dataDir } : {}) },
      password: undefined,
      connection: () => ({ driver: 'pglite', pglite: conn.instance() }),
      notifier: new PGliteJournalNotifier(() => conn.instance(), channel),
      close: () => conn.close(),
    };
  }
  const conn = options.pool !== undefined ? connectFromPool(options.pool as unknown as pg.Pool) : connectFromUrl(options.databaseUrl as string, options);
  // Kysely's destroy() ends the pool it drives; a borrowed pool is handed over behind a no-op end().
  const pool: PostgresPool = conn.owned ? conn.pool : { connect: () => conn.pool.connect(), end: async () => {}, options: conn.pool.options };
  const kysely = new Kysely<SqlDatabase>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    pool: conn.pool,
    target: conn.target,
    password: conn.password,
    connection: () => ({ driver: 'postgres', clientConfig: conn.clientConfig as SqlClientConfig }),
    notifier: new PgJournalNotifier(conn.clientConfig, channel, mapError(conn.target, conn.password)),
    close: async () => {},
  };
}

/**
 * Run a statement as a named prepared statement (pg prepares it once per connection and reuses it:
 * no parse, and after a few executions Postgres' cached generic plan, so no planning either).
 */
function preparedRunner(pool: pg.Pool): NonNullable<SqlContext['prepared']> {
  const names = new Map<string, string>();
  return async (text, values) => {
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `flowctl_${sha256Hex(text).slice(0, 24)}`));
    const result = await pool.query({ name, text, values: values as unknown[] });
    return result.rows;
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

  // The async context of an open transaction's fn, to refuse calls on the storage from inside it.
  const inTransaction = new AsyncLocalStorage<true>();
  const ctx: SqlContext = {
    db,
    schema,
    ...(driver.pool && options.preparedStatements !== false ? { prepared: preparedRunner(driver.pool) } : {}),
    channel,
    notifier: driver.notifier,
    watchPollMs: options.watchPollMs ?? 1000,
    async guard(op, fn) {
      if (inTransaction.getStore()) {
        throw new FlowError(
          'transaction_in_progress',
          prefixed('storage-sql', `${op} was called on the storage inside transaction(fn): use the tx view fn was given`),
        );
      }
      await init();
      try {
        return await fn();
      } catch (err) {
        // A call the storage's dispose cut short (its connection closed under it) says so, whatever
        // the driver's own error was.
        if (disposed) throw new FlowError('storage_disposed', prefixed('storage-sql', `storage was disposed during ${op}`));
        throw mapError(err, op);
      }
    },
  };

  // Group commit of the two writes every run makes: its record, and each journal entry.
  const grouped = options.groupCommit !== false;
  const maxInFlight = driver.target.driver === 'postgres' ? GROUP_COMMIT_IN_FLIGHT : 1;
  const appends = grouped
    ? new GroupCommit<AppendItem, void>({
        key: (it) => it.runId,
        size: (it) => it.entry.length + (it.patch?.length ?? 0),
        maxItems: GROUP_COMMIT_MAX_ITEMS,
        maxBytes: GROUP_COMMIT_MAX_BYTES,
        maxInFlight,
        runBatch: (items) => appendStatement(ctx, items),
        runOne: (item) => appendOne(ctx, item),
      })
    : undefined;
  const creates = grouped
    ? new GroupCommit<CreateItem, void>({
        key: (it) => it.id,
        size: (it) => it.row.length,
        maxItems: GROUP_COMMIT_MAX_ITEMS,
        maxBytes: GROUP_COMMIT_MAX_BYTES,
        maxInFlight,
        runBatch: (items) => createStatement(ctx, items),
        runOne: (item) => createOne(ctx, item),
      })
    : undefined;
  const journal = sqlJournalStore(ctx, appends);

  const transaction = async <T>(fn: (tx: SqlStorageTransaction) => Promise<T>): Promise<T> => {
    if (inTransaction.getStore()) {
      throw new FlowError('nested_transaction', prefixed('storage-sql', 'transaction() inside a transaction is not supported: use the tx view you were given'));
    }
    await init();
    // fn's own error goes back to the caller as it is; only the storage's failures are mapped.
    let fnError: { error: unknown } | undefined;
    try {
      return await db.transaction().execute(async (trx) => {
        let open = true;
        const tctx: SqlContext = {
          db: trx,
          schema,
          channel,
          notifier: driver.notifier,
          watchPollMs: ctx.watchPollMs,
          async guard(op, inner) {
            if (!open) throw new FlowError('transaction_closed', prefixed('storage-sql', `${op} on a transaction view after its fn settled`));
            try {
              return await inner();
            } catch (err) {
              throw mapError(err, op);
            }
          },
        };
        const txJournal = sqlJournalStore(tctx);
        const tx: SqlStorageTransaction = {
          name: `sql-${driver.target.driver}`,
          driver: driver.target.driver,
          schema,
          flags,
          db: trx,
          specs: sqlSpecStore(tctx),
          deploys: sqlDeployStore(tctx),
          runs: sqlRunStore(tctx),
          journal: {
            ...txJournal,
            // Following a journal waits for other writers' commits, which a transaction must not do.
            // biome-ignore lint/correctness/useYield: an async iterable that fails on its first next(), as the port's watch does
            watch: async function* () {
              throw new FlowError(
                'unsupported_in_transaction',
                prefixed('storage-sql', 'journal.watch inside transaction(fn): watch the storage itself, after the commit'),
              );
            },
          },
          artifacts: sqlArtifactStore(tctx),
          init: () => Promise.resolve(),
          dispose: () => Promise.resolve(),
          transaction: () =>
            Promise.reject(
              new FlowError(
                'nested_transaction',
                prefixed('storage-sql', 'transaction() inside a transaction is not supported: use the tx view you were given'),
              ),
            ),
        };
        try {
          return await inTransaction.run(true, () => fn(tx));
        } catch (err) {
          fnError = { error: err };
          throw err;
        } finally {
          open = false;
        }
      });
    } catch (err) {
      if (fnError !== undefined && err === fnError.error) throw err;
      throw mapError(err, 'transaction');
    }
  };

  const flags = {
    crossProcessWatch: driver.target.driver === 'postgres',
    durable: driver.target.driver === 'postgres' || driver.target.dataDir !== undefined,
    appendUpdatesRun: true,
  };

  return {
    name: `sql-${driver.target.driver}`,
    driver: driver.target.driver,
    schema,
    flags,
    db,
    connection: driver.connection,
    specs: sqlSpecStore(ctx, new Set()),
    deploys: sqlDeployStore(ctx),
    runs: sqlRunStore(ctx, creates),
    journal,
    artifacts: sqlArtifactStore(ctx),
    transaction,
    init,
    dispose() {
      disposed ??= (async () => {
        await initPromise?.catch(() => {});
        await Promise.all([appends?.idle(), creates?.idle()]);
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
