// flowctl/adapters/storage-sql: SQL storage over PGlite or Postgres. Re-exports only.
export { createSqlStorage } from './sql-storage.js';
export type { SqlConnectionInfo, SqlStorage, SqlStorageOptions, SqlStorageTransaction } from './sql-storage.js';
export type { PGliteInstance, SqlClientConfig, SqlPool } from './driver-types.js';
export { sqlStorageFromEnv, sqlStorageOptionsFromEnv, DEFAULT_PGLITE_DIR } from './sql-env.js';
export type { SqlStorageFromEnvOptions } from './sql-env.js';
export { MIGRATIONS } from './migrations.js';
export { applyMigrationSet, migrationSetCurrent } from './migration-set.js';
export type { MigrationSet } from './migration-set.js';
export { DEFAULT_POOL_SIZE, DEFAULT_CONNECT_TIMEOUT_MS } from './pg-connection.js';
export type { SqlDatabase } from './schema.js';
export { createSqlServiceStorage } from './service/service-storage.js';
export type { SqlServiceStorageOptions } from './service/service-storage.js';
export { SERVICE_MIGRATIONS } from './service/service-migrations.js';
