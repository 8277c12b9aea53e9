import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { quoteIdent } from '../journal-notifier.js';
import { migrateSet, setCurrent, type MigrationSet } from '../migration-set.js';
import { FILE_MIGRATIONS } from './file-migrations.js';
import { OAUTH_MIGRATIONS } from './oauth-migrations.js';
import { QUEUE_MIGRATIONS } from './queue-migrations.js';
import { SCHEDULE_MIGRATIONS } from './schedule-migrations.js';

/**
 * The hosted service's own migration set (docs/storage-sql.md, "Hosted service tables"), kept apart
 * from the engine's: its own migration tables (`svc_migration`, `svc_migration_lock`), applied after
 * the engine's, refusing only a newer schema of its own. Never edit a released migration.
 */
export const SERVICE_MIGRATION_TABLE = 'svc_migration';
export const SERVICE_MIGRATION_LOCK_TABLE = 'svc_migration_lock';

export const SERVICE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  // 0005_schedules (the Migrator orders by name, not by place here).
  ...SCHEDULE_MIGRATIONS,
  // 0006_dispatch_kinds, 0007_webhooks, 0008_executions_unfinished.
  ...QUEUE_MIGRATIONS,
  // 0009_org_files.
  ...FILE_MIGRATIONS,
  // 0010_oauth.
  ...OAUTH_MIGRATIONS,
  '0001_accounts': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('svc_orgs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().check(sql`char_length(name) between 1 and 120`))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('svc_members')
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('svc_users.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'member')`))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc_members_pkey', ['org_id', 'user_id'])
        .execute();
      await db.schema.createIndex('svc_members_by_user').on('svc_members').columns(['user_id', 'created_at']).execute();
      await db.schema
        .createTable('svc_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('svc_users.id').onDelete('cascade'))
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('svc_sessions_by_member').on('svc_sessions').columns(['org_id', 'user_id']).execute();
      await db.schema
        .createTable('svc_api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
        .addColumn('hash', 'text', (c) => c.notNull().unique().check(sql`hash ~ '^[0-9a-f]{64}$'`))
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('automations', 'jsonb')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'timestamptz')
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('svc_api_keys_by_org').on('svc_api_keys').columns(['org_id', 'created_at desc']).execute();
      await db.schema
        .createTable('svc_audit')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull().check(sql`seq >= 0`))
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('at', 'timestamptz', (c) => c.notNull())
        .addColumn('metadata', 'jsonb', (c) => c.notNull())
        .addColumn('prev', 'text')
        .addColumn('digest', 'text', (c) => c.notNull())
        // The unique (org, seq) is what makes two concurrent appends unable to fork an org's chain.
        .addUniqueConstraint('svc_audit_org_seq', ['org_id', 'seq'])
        .execute();
    },
  },
  '0002_automations': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_automations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull().check(sql`name ~ '^[a-z0-9][a-z0-9-]*$' and char_length(name) <= 64`))
        .addColumn('task', 'text', (c) => c.notNull())
        .addColumn('site', 'text', (c) => c.notNull())
        .addColumn('mcp_enabled', 'boolean', (c) => c.notNull().defaultTo(true))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('draft', 'published', 'failing')`))
        .addColumn('live_digest', 'text')
        .addColumn('needs_attention', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('failing_step', 'text')
        .addColumn('example', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('params', 'jsonb', (c) => c.notNull())
        .addUniqueConstraint('svc_automations_org_name', ['org_id', 'name'])
        .execute();
      // At most one starter example per org, also under concurrent calls.
      await db.schema.createIndex('svc_automations_one_example').on('svc_automations').column('org_id').unique().where(sql.ref('example'), '=', true).execute();
      await db.schema
        .createTable('svc_authoring')
        .addColumn('automation_id', 'text', (c) => c.primaryKey().references('svc_automations.id').onDelete('cascade'))
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('captured_ops', 'jsonb', (c) => c.notNull())
        .addColumn('input_params', 'jsonb', (c) => c.notNull())
        .addColumn('input_slots', 'jsonb', (c) => c.notNull())
        .addColumn('secret_slots', 'jsonb', (c) => c.notNull())
        .addColumn('files', 'jsonb', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('editing', 'published')`))
        .execute();
      await db.schema
        .createTable('svc_authoring_files')
        .addColumn('automation_id', 'text', (c) => c.notNull().references('svc_automations.id').onDelete('cascade'))
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bytea', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc_authoring_files_pkey', ['automation_id', 'name'])
        .execute();
      await db.schema
        .createTable('svc_versions')
        .addColumn('automation_id', 'text', (c) => c.notNull().references('svc_automations.id').onDelete('cascade'))
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('flow_digest', 'text', (c) => c.notNull().check(sql`flow_digest ~ '^sha256:[0-9a-f]{64}$'`))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc_versions_pkey', ['automation_id', 'flow_digest'])
        .execute();
      await db.schema
        .createTable('svc_secrets')
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('ciphertext', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc_secrets_pkey', ['org_id', 'name'])
        .execute();
    },
  },
  '0003_executions': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_executions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('automation_id', 'text', (c) => c.notNull())
        .addColumn('flow', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('flow_digest', 'text', (c) => c.notNull())
        .addColumn('dispatch', 'text', (c) => c.notNull().check(sql`dispatch in ('gateway', 'mcp', 'schedule')`))
        .addColumn('key_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('finished_at', 'timestamptz')
        .addColumn('error_code', 'text')
        .execute();
      await db.schema.createIndex('svc_executions_newest').on('svc_executions').columns(['org_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('svc_executions_by_flow').on('svc_executions').columns(['org_id', 'flow', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('svc_executions_by_run').on('svc_executions').columns(['org_id', 'run_id']).execute();
      await db.schema.createIndex('svc_executions_by_automation').on('svc_executions').columns(['org_id', 'automation_id', 'created_at']).execute();
    },
  },
  '0004_session_lookup': {
    // The session check runs on every dashboard request. Planning its five-table join costs more
    // than executing it (PGlite measured ~3x), and a PL/pgSQL function keeps its plan per
    // connection, so the check is one call of this function (bench/RESULTS.md#hosted).
    async up(db: Kysely<any>): Promise<void> {
      const schema = schemaOf(db);
      const t = (name: string) => (schema === undefined ? quoteIdent(name) : `${quoteIdent(schema)}.${quoteIdent(name)}`);
      const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
      await sql
        .raw(
          `create function ${t('svc_session_lookup')}(p_id text)
  returns table (id text, user_id text, org_id text, created_at text, expires_at text, revoked_at text,
                 email text, org_name text, org_created_at text, role text,
                 m_org_id text, m_org_name text, m_org_created_at text)
  language plpgsql stable
as $fn$
begin
  return query
    select s.id, s.user_id, s.org_id, ${iso('s.created_at')}, ${iso('s.expires_at')}, ${iso('s.revoked_at')},
           u.email, so.name, ${iso('so.created_at')}, m.role, o.id, o.name, ${iso('o.created_at')}
      from ${t('svc_sessions')} s
      join ${t('svc_users')} u on u.id = s.user_id
      join ${t('svc_orgs')} so on so.id = s.org_id
      left join ${t('svc_members')} m on m.user_id = s.user_id
      left join ${t('svc_orgs')} o on o.id = m.org_id
     where s.id = p_id
     order by m.created_at, o.id;
end
$fn$`,
        )
        .execute(db);
    },
  },
};

/** The schema a `withSchema` kysely instance qualifies tables with (undefined: the search_path's). */
function schemaOf(db: Kysely<any>): string | undefined {
  const node = db.selectFrom('svc_sessions').selectAll().compile().query as { from?: { froms?: { table?: { schema?: { name?: string } } }[] } };
  return node.from?.froms?.[0]?.table?.schema?.name;
}

/** The hosted service's set: its own migration tables, refusing only a newer service schema. */
export const SERVICE_MIGRATION_SET: MigrationSet = {
  name: 'hosted service',
  table: SERVICE_MIGRATION_TABLE,
  lockTable: SERVICE_MIGRATION_LOCK_TABLE,
  migrations: SERVICE_MIGRATIONS,
};

/** Apply the service migrations (after the engine's); refuse a database migrated by a newer service. */
export function migrateService(db: Kysely<any>, schema: string | undefined): Promise<string[]> {
  return migrateSet(db, schema, SERVICE_MIGRATION_SET);
}

/** Whether every service migration this code knows is applied (readiness). */
export function serviceSchemaCurrent(db: Kysely<any>, schema: string | undefined): Promise<boolean> {
  return setCurrent(db, schema, SERVICE_MIGRATION_SET);
}
