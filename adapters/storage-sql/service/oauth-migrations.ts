import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Service migration of OAuth 2.1 for the hosted MCP endpoint (part of SERVICE_MIGRATIONS; its own
 * file so the set's other entries stay untouched). Never edit a released migration.
 *
 * `svc_oauth_models` holds the authorization server library's records under the SHA-256 of their
 * ids (never a raw token id); `svc_oauth_grants` the grants users gave clients (org, mode, scope);
 * `svc_oauth_secrets` the server's own keys (signing and cookie keys), sealed by the secret box.
 */
export const OAUTH_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0010_oauth': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_oauth_models')
        .addColumn('model', 'text', (c) => c.notNull().check(sql`char_length(model) between 1 and 64`))
        .addColumn('key', 'text', (c) => c.notNull().check(sql`key ~ '^[0-9a-f]{64}$'`))
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('grant_hash', 'text')
        .addColumn('uid', 'text')
        .addColumn('user_code', 'text')
        .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
        .addColumn('consumed_at', 'timestamptz')
        .addPrimaryKeyConstraint('svc_oauth_models_pkey', ['model', 'key'])
        .execute();
      await db.schema
        .createIndex('svc_oauth_models_by_grant')
        .on('svc_oauth_models')
        .column('grant_hash')
        .where(sql.ref('grant_hash'), 'is not', null)
        .execute();
      await db.schema.createIndex('svc_oauth_models_by_uid').on('svc_oauth_models').columns(['model', 'uid']).where(sql.ref('uid'), 'is not', null).execute();
      await db.schema.createIndex('svc_oauth_models_expiry').on('svc_oauth_models').column('expires_at').execute();
      await db.schema
        .createTable('svc_oauth_grants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('grant_hash', 'text', (c) => c.notNull().unique())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('client_name', 'text', (c) => c.notNull())
        .addColumn('redirect_host', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
        .addColumn('automations', 'jsonb')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'timestamptz')
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('svc_oauth_grants_by_org').on('svc_oauth_grants').columns(['org_id', 'created_at']).execute();
      await db.schema
        .createTable('svc_oauth_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
};
