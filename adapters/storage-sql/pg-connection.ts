import pg from 'pg';
import { FlowError, prefixed } from '../../src/errors.js';
import type { SqlTarget } from './sql-errors.js';

/** Default size of the pg pool the adapter creates from a URL. */
export const DEFAULT_POOL_SIZE = 10;
/** Default time to wait for a Postgres connection before failing with `db_unreachable`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface PgConnection {
  pool: pg.Pool;
  /** Settings for the dedicated LISTEN client (the pool's own connection settings). */
  clientConfig: pg.ClientConfig;
  target: SqlTarget & { driver: 'postgres' };
  /** Scrubbed from every message we produce. */
  password: string | undefined;
  /** False when the caller passed the pool: it stays theirs, dispose leaves it open. */
  owned: boolean;
}

/** Parse `postgres://user:password@host:port/database?...`; errors never echo the password. */
export function targetFromUrl(databaseUrl: string): { target: SqlTarget & { driver: 'postgres' }; password: string | undefined } {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new FlowError('invalid_options', prefixed('storage-sql', 'DATABASE_URL is not a valid URL (expected postgres://user@host:port/database)'));
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new FlowError('invalid_options', prefixed('storage-sql', `DATABASE_URL must start with postgres:// or postgresql://, not ${url.protocol}//`));
  }
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  const host = url.hostname || url.searchParams.get('host') || 'localhost';
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres';
  const user = url.username ? decodeURIComponent(url.username) : undefined;
  const target = { driver: 'postgres' as const, host: host.replace(/^\[|\]$/g, ''), port: Number(url.port || 5432), database, ...(user ? { user } : {}) };
  return { target, password };
}

export function connectFromUrl(databaseUrl: string, options: { poolSize?: number; connectTimeoutMs?: number }): PgConnection {
  const { target, password } = targetFromUrl(databaseUrl);
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new FlowError('invalid_options', prefixed('storage-sql', `poolSize must be a positive integer, got ${poolSize}`));
  }
  const clientConfig: pg.ClientConfig = {
    connectionString: databaseUrl,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
  };
  const pool = new pg.Pool({ ...clientConfig, max: poolSize });
  // An idle client's socket error would otherwise be an unhandled 'error' event that kills the
  // process; the next query gets a fresh connection (or a db_unreachable FlowError).
  pool.on('error', () => {});
  guardCheckedOutClients(pool);
  return { pool, clientConfig, target, password, owned: true };
}

/**
 * pg-pool listens for a client's 'error' only while the client sits idle in the pool. A client that
 * is checked out but between statements (kysely holds one for a whole transaction) when the server
 * goes away (a restart's 57P01 admin_shutdown, a reset socket) emits 'error' with no listener: an
 * uncaught exception that kills the process. Every client gets a listener of its own; the error
 * still reaches the query that runs on it (as "not queryable", a connection error) and pg-pool
 * discards the client when it is released (docs/deploy.md, "Database outage").
 */
function guardCheckedOutClients(pool: pg.Pool): void {
  pool.on('connect', (client: pg.PoolClient) => {
    client.on('error', () => {});
  });
}

export function connectFromPool(pool: pg.Pool): PgConnection {
  const o = pool.options as pg.PoolConfig;
  let target: SqlTarget & { driver: 'postgres' };
  let password = typeof o.password === 'string' ? o.password : undefined;
  if (o.connectionString) {
    const parsed = targetFromUrl(o.connectionString);
    target = parsed.target;
    password ??= parsed.password;
  } else {
    target = {
      driver: 'postgres',
      host: o.host ?? process.env.PGHOST ?? 'localhost',
      port: Number(o.port ?? process.env.PGPORT ?? 5432),
      database: o.database ?? process.env.PGDATABASE ?? o.user ?? process.env.PGUSER ?? 'postgres',
      ...((o.user ?? process.env.PGUSER) ? { user: o.user ?? process.env.PGUSER } : {}),
    };
  }
  const { max: _max, idleTimeoutMillis: _idle, ...clientConfig } = o;
  // The caller's pool too: a restart of the database must not kill the process through it.
  guardCheckedOutClients(pool);
  return { pool, clientConfig: clientConfig as pg.ClientConfig, target, password, owned: false };
}
