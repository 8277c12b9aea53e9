import type { VersionStore } from '../../../src/ports/service-storage.js';
import { isoTextNotNull, timestamptz } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';

/** Published versions of automations (migration 0002_automations): one row per (automation, digest). */
export function sqlVersionStore(ctx: ServiceContext): VersionStore {
  const versions = () =>
    ctx.db.selectFrom('svc_versions').select(['automation_id', 'org_id', 'flow_digest', isoTextNotNull('created_at', 'created_at'), 'created_by']);
  return {
    add: (v) =>
      ctx.guard('versions.add', async () => {
        await ctx.db
          .insertInto('svc_versions')
          .values({
            automation_id: v.automation_id,
            org_id: v.org_id,
            flow_digest: v.flow_digest,
            created_at: timestamptz('created_at', v.created_at),
            created_by: v.created_by,
          })
          .onConflict((oc) => oc.columns(['automation_id', 'flow_digest']).doNothing())
          .execute();
      }),
    list: (orgId, automationId) =>
      ctx.guard('versions.list', () =>
        versions().where('org_id', '=', orgId).where('automation_id', '=', automationId).orderBy('created_at', 'desc').orderBy('flow_digest', 'desc').execute(),
      ),
    get: (orgId, automationId, digest) =>
      ctx.guard('versions.get', () =>
        versions().where('org_id', '=', orgId).where('automation_id', '=', automationId).where('flow_digest', '=', digest).executeTakeFirst(),
      ),
  };
}
