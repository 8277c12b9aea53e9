import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Service migrations of schedules and shared rate limits (part of SERVICE_MIGRATIONS; kept in their
 * own file so the set's other entries stay untouched). Never edit a released migration.
 */
export const SCHEDULE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0005_schedules': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_schedules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('automation_id', 'text', (c) => c.notNull().references('svc_automations.id').onDelete('cascade'))
        .addColumn('cron', 'text', (c) => c.notNull().check(sql`char_length(cron) between 1 and 200`))
        .addColumn('timezone', 'text')
        .addColumn('flow_digest', 'text', (c) => c.notNull().check(sql`flow_digest ~ '^sha256:[0-9a-f]{64}$'`))
        .addColumn('inputs', 'jsonb', (c) => c.notNull())
        .addColumn('enabled', 'boolean', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('since', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('svc_schedules_by_automation').on('svc_schedules').columns(['org_id', 'automation_id', 'created_at']).execute();
      await db.schema.createIndex('svc_schedules_enabled').on('svc_schedules').columns(['created_at', 'id']).where(sql.ref('enabled'), '=', true).execute();
      // One row per (schedule, fire time): the primary key is the claim. Whichever process inserts
      // it first fires; every other process's insert conflicts and it does nothing.
      await db.schema
        .createTable('svc_schedule_fires')
        .addColumn('schedule_id', 'text', (c) => c.notNull().references('svc_schedules.id').onDelete('cascade'))
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('fire_at', 'timestamptz', (c) => c.notNull())
        .addColumn('claimed_at', 'timestamptz', (c) => c.notNull())
        .addColumn('claimed_by', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('svc_schedule_fires_pkey', ['schedule_id', 'fire_at'])
        .execute();
      // rate-limiter-flexible's RateLimiterPostgres table (its own DDL, with `key` as text so long keys
      // fit), created here so the limiter never runs DDL itself (`tableCreated: true`).
      await db.schema
        .createTable('svc_rate_limits')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expire', 'bigint')
        .execute();
    },
  },
};
