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
  // Outbound webhooks: endpoints per org (the signing secret sealed) and their deliveries.
  '0007_webhooks': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull().check(sql`char_length(url) between 1 and 2048`))
        .addColumn('events', 'jsonb', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('enabled', 'boolean', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('svc_webhooks_by_org').on('svc_webhooks').columns(['org_id', 'created_at']).execute();
      await db.schema
        .createTable('svc_webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('svc_webhooks.id').onDelete('cascade'))
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
        .addColumn('attempts', 'jsonb', (c) => c.notNull())
        .addColumn('next_attempt_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('svc_webhook_deliveries_newest')
        .on('svc_webhook_deliveries')
        .columns(['org_id', 'webhook_id', 'created_at desc', 'id desc'])
        .execute();
    },
  },
  // The rows the reconcile sweep reads (executions.listUnfinished): few, whatever the table's size.
  '0008_executions_unfinished': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createIndex('svc_executions_unfinished')
        .on('svc_executions')
        .columns(['created_at', 'id'])
        .where(sql<boolean>`status in ('queued', 'running')`)
        .execute();
    },
  },
};
