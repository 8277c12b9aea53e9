import { resolve } from 'node:path';
import { FlowError, prefixed } from '../../src/errors.js';
import { createSqlStorage, type SqlStorage, type SqlStorageOptions } from './sql-storage.js';

/** Where the CLI and the example launcher keep PGlite when no DATABASE_URL is set. */
export const DEFAULT_PGLITE_DIR = '.flowctl/db';

export interface SqlStorageFromEnvOptions {
  /** Environment to read. Default: process.env. */
  env?: Record<string, string | undefined>;
  /** PGlite data folder when DATABASE_URL is unset. Default `.flowctl/db`, resolved against `cwd`. */
  defaultDataDir?: string;
  /** Base for a relative `defaultDataDir`. Default: process.cwd(). */
  cwd?: string;
  /** Passed through to createSqlStorage (pool size, timeouts); the environment decides the driver. */
  options?: Omit<SqlStorageOptions, 'databaseUrl' | 'pool' | 'pglite'>;
}

/**
 * `DATABASE_URL` set (and non-empty): Postgres. Otherwise PGlite in `defaultDataDir`.
 * `FLOWCTL_DB_SCHEMA` picks a Postgres schema; `FLOWCTL_DB_POOL_SIZE` the pg pool size.
 */
export function sqlStorageFromEnv(options: SqlStorageFromEnvOptions = {}): SqlStorage {
  return createSqlStorage(sqlStorageOptionsFromEnv(options));
}

/** The createSqlStorage options sqlStorageFromEnv would use (the hosted assembly takes them). */
export function sqlStorageOptionsFromEnv(options: SqlStorageFromEnvOptions = {}): SqlStorageOptions {
  const env = options.env ?? process.env;
  const schema = env.FLOWCTL_DB_SCHEMA || options.options?.schema;
  const rawPool = env.FLOWCTL_DB_POOL_SIZE;
  const poolSize = rawPool ? Number(rawPool) : options.options?.poolSize;
  if (rawPool && !(Number.isInteger(poolSize) && (poolSize as number) > 0)) {
    throw new FlowError('invalid_options', prefixed('storage-sql', `FLOWCTL_DB_POOL_SIZE must be a positive integer, got ${JSON.stringify(rawPool)}`));
  }
  const common = { ...options.options, ...(schema ? { schema } : {}), ...(poolSize ? { poolSize } : {}) };
  if (env.DATABASE_URL) return { ...common, databaseUrl: env.DATABASE_URL };
  const dataDir = resolve(options.cwd ?? process.cwd(), options.defaultDataDir ?? DEFAULT_PGLITE_DIR);
  return { ...common, pglite: { dataDir } };
}
