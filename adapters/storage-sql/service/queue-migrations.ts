import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Service migrations of queue dispatch (part of SERVICE_MIGRATIONS). Never edit a released migration.
 */
export const QUEUE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  // Dispatch kinds of the executions index become `sync | queue | schedule | mcp` (gateway calls
  // are `sync` or `queue` by how they ran); rows of gateway calls, all run in the request until
  // now, become `sync`.
  '0006_dispatch_kinds': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('svc_executions').dropConstraint('svc_executions_dispatch_check').execute();
      await db.updateTable('svc_executions').set({ dispatch: 'sync' }).where('dispatch', '=', 'gateway').execute();
      await db.schema
        .alterTable('svc_executions')
        .addCheckConstraint('svc_executions_dispatch_check', sql`dispatch in ('sync', 'queue', 'schedule', 'mcp')`)
        .execute();
    },
  },
};
