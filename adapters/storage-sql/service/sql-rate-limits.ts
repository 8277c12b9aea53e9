import { CompiledQuery } from 'kysely';
import type { RateLimitStore } from '../../../src/ports/service-storage.js';
import type { ServiceDb } from './service-context.js';

/**
 * rate-limiter-flexible's Postgres limiter over the storage's own connection pool (through kysely,
 * so it is the same pool and the same credentials): `storeType: 'pool'` calls `client.query(q)` on
 * `svc_rate_limits` (migration 0005_schedules).
 */
export function sqlRateLimitStore(db: ServiceDb, schema: string | undefined): RateLimitStore {
  return {
    client: {
      // The library's statement names are per table, not per schema: run unnamed.
      query: async (q) => {
        const res = await db.executeQuery(CompiledQuery.raw(q.text, q.values ?? []));
        return { rows: res.rows };
      },
    },
    tableName: 'svc_rate_limits',
    ...(schema !== undefined ? { schemaName: schema } : {}),
  };
}
