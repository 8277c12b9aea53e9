import type { SecretStoreRecords } from '../../../src/ports/service-storage.js';
import { isoTextNotNull, timestamptz } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';

/** The org secret store's records (migration 0002_automations): ciphertexts only, by (org, name). */
export function sqlSecretStore(ctx: ServiceContext): SecretStoreRecords {
  const secrets = () => ctx.db.selectFrom('svc_secrets').select(['org_id', 'name', 'ciphertext', isoTextNotNull('updated_at', 'updated_at')]);
  return {
    put: (sec) =>
      ctx.guard('secrets.put', async () => {
        await ctx.db
          .insertInto('svc_secrets')
          .values({ org_id: sec.org_id, name: sec.name, ciphertext: sec.ciphertext, updated_at: timestamptz('updated_at', sec.updated_at) })
          .onConflict((oc) => oc.columns(['org_id', 'name']).doUpdateSet({ ciphertext: sec.ciphertext, updated_at: timestamptz('updated_at', sec.updated_at) }))
          .execute();
      }),
    get: (orgId, name) => ctx.guard('secrets.get', () => secrets().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst()),
    list: (orgId) => ctx.guard('secrets.list', () => secrets().where('org_id', '=', orgId).orderBy('name').execute()),
    delete: (orgId, name) =>
      ctx.guard('secrets.delete', async () => {
        const res = await ctx.db.deleteFrom('svc_secrets').where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
        return Number(res.numDeletedRows) > 0;
      }),
  };
}
