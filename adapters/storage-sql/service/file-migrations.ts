import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Service migrations of upload files (part of SERVICE_MIGRATIONS). Never edit a released migration.
 */
export const FILE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  // Upload file bytes move to a per-org content-addressed table, written once and never replaced: a
  // published version reads its files by digest there for as long as the org exists, whatever the
  // authoring session attaches under the same name later. svc_authoring_files keeps the session's
  // name -> digest map.
  '0009_org_files': {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('svc_files')
        .addColumn('org_id', 'text', (c) => c.notNull().references('svc_orgs.id').onDelete('cascade'))
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bytea', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc_files_pkey', ['org_id', 'digest'])
        .execute();
      await db
        .insertInto('svc_files')
        .columns(['org_id', 'digest', 'bytes'])
        .expression((eb) => eb.selectFrom('svc_authoring_files').select(['org_id', 'digest', 'bytes']).distinctOn(['org_id', 'digest']))
        .onConflict((oc) => oc.columns(['org_id', 'digest']).doNothing())
        .execute();
      await db.schema.alterTable('svc_authoring_files').dropColumn('bytes').execute();
    },
  },
};
