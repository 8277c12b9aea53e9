import { CompiledQuery } from 'kysely';
import { FlowError, isFlowError, prefixed } from '../../../src/errors.js';
import type { ServiceStorage, ServiceStores } from '../../../src/ports/service-storage.js';
import type { SqlStorage } from '../sql-storage.js';
import { COMPONENT, wrap, type ServiceContext, type ServiceDb } from './service-context.js';
import { migrateService, serviceSchemaCurrent } from './service-migrations.js';
import type { ServiceDatabase } from './service-schema.js';
import { sqlApiKeyStore } from './sql-api-keys.js';
import { sqlAuditStore } from './sql-audit.js';
import { sqlAuthoringStore } from './sql-authoring.js';
import { sqlAutomationStore } from './sql-automations.js';
import { sqlExecutionStore } from './sql-executions.js';
import { sqlMemberStore } from './sql-members.js';
import { sqlOAuthStore } from './sql-oauth.js';
import { sqlRateLimitStore } from './sql-rate-limits.js';
import { sqlScheduleStore } from './sql-schedules.js';
import { sqlSecretStore } from './sql-secrets.js';
import { sqlSessionStore } from './sql-sessions.js';
import { sqlOrgStore, sqlUserStore } from './sql-users.js';
import { sqlVersionStore } from './sql-versions.js';
import { sqlWebhookStore } from './sql-webhooks.js';

/**
 * The hosted service's storage on the engine's SQL storage (same connection, same schema, its own
 * tables and migration set). One transaction per `transaction(fn)`; on PGlite, kysely serialises
 * every query on the single connection, so a transaction holds it until it ends. One store per file
 * (sql-*.ts) over the typed service tables (service-schema.ts), as the engine's SQL storage is split.
 */

export interface SqlServiceStorageOptions {
  /** Skip the `last_used_at` write when the stored value is younger than this. Default 60 000 ms. */
  touchAfterMs?: number;
}

/** The stores over `ctx` (the storage's kysely, or one transaction of it). */
function stores(ctx: ServiceContext, options: Required<SqlServiceStorageOptions>): ServiceStores {
  return {
    users: sqlUserStore(ctx),
    orgs: sqlOrgStore(ctx),
    members: sqlMemberStore(ctx),
    sessions: sqlSessionStore(ctx),
    apiKeys: sqlApiKeyStore(ctx, options.touchAfterMs),
    audit: sqlAuditStore(ctx),
    automations: sqlAutomationStore(ctx),
    authoring: sqlAuthoringStore(ctx),
    versions: sqlVersionStore(ctx),
    secrets: sqlSecretStore(ctx),
    executions: sqlExecutionStore(ctx),
    schedules: sqlScheduleStore(ctx),
    webhooks: sqlWebhookStore(ctx),
    oauth: sqlOAuthStore(ctx),
  };
}

/** The service tables' view of a kysely of the engine storage (or of one of its transactions). */
const serviceDb = (db: SqlStorage['db']): ServiceDb => db.$extendTables<ServiceDatabase>().$pickTables<keyof ServiceDatabase>();

/**
 * Service storage on an engine SQL storage: `init()` runs the engine's migrations, then the
 * service's. `dispose()` leaves the engine storage to its owner.
 */
export function createSqlServiceStorage(engineStorage: SqlStorage, options: SqlServiceStorageOptions = {}): ServiceStorage {
  const db = serviceDb(engineStorage.db);
  const schema = engineStorage.schema;
  const opts: Required<SqlServiceStorageOptions> = { touchAfterMs: options.touchAfterMs ?? 60_000 };
  let initPromise: Promise<void> | undefined;
  const init = (): Promise<void> => {
    initPromise ??= (async () => {
      await engineStorage.init();
      await migrateService(db, schema);
    })().catch((err: unknown) => {
      initPromise = undefined;
      if (isFlowError(err)) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw new FlowError('db_error', prefixed(COMPONENT, `service migrations failed: ${message}`), { cause: err });
    });
    return initPromise;
  };
  const ctx: ServiceContext = {
    db,
    schema,
    async guard(op, fn) {
      await init();
      try {
        return await fn();
      } catch (err) {
        wrap(op, err);
      }
    },
  };
  // Inside a transaction, init has happened (the transaction was opened through `guard`).
  const inside = (tx: ServiceDb): ServiceContext => ({ db: tx, schema, guard: (op, fn) => fn().catch((err: unknown) => wrap(op, err)) });
  return {
    name: `service-${engineStorage.name}`,
    ...stores(ctx, opts),
    // Postgres may be shared by many processes: their rate limits count in one table. PGlite is one process.
    ...(engineStorage.driver === 'postgres' ? { rateLimitStore: sqlRateLimitStore(db, schema) } : {}),
    async transaction(fn) {
      await init();
      // fn's own error is rethrown as it is; only a failure to begin or commit becomes db_error.
      let failed: { err: unknown } | undefined;
      try {
        return await db.transaction().execute(async (tx) => {
          try {
            return await fn(stores(inside(tx), opts));
          } catch (err) {
            failed = { err };
            throw err;
          }
        });
      } catch (err) {
        if (failed) throw failed.err;
        wrap('transaction', err);
      }
    },
    async engineTransaction(fn) {
      await init();
      // The engine storage's own transaction: its run store over the same connection, and the
      // connection itself for the queue's insert (pg-boss runs it inline, in this transaction).
      return engineStorage.transaction((etx) => {
        const trx = serviceDb(etx.db);
        return fn({
          ...stores(inside(trx), opts),
          engineRuns: etx.runs,
          sql: { executeSql: async (text, values) => ({ rows: (await trx.executeQuery(CompiledQuery.raw(text, values ?? []))).rows }) },
        });
      });
    },
    async ready() {
      try {
        await init();
        return await serviceSchemaCurrent(db, schema);
      } catch {
        return false;
      }
    },
    init,
    async dispose() {
      await initPromise?.catch(() => {});
    },
  };
}
