import type { ApiKeyRecord, ApiKeyStore } from '../../../src/ports/service-storage.js';
import { isoText, isoTextNotNull, jsonbOrNull, jsonText, parseJson, timestamptz, timestamptzOrNull } from '../sql-values.js';
import { insertUnique, type ServiceContext } from './service-context.js';

interface KeyRow {
  id: string;
  org_id: string;
  name: string;
  mode: ApiKeyRecord['mode'];
  hash: string;
  prefix: string;
  last4: string;
  automations: string | null;
  created_at: string;
  created_by: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  mode: r.mode,
  hash: r.hash,
  prefix: r.prefix,
  last4: r.last4,
  ...(r.automations !== null ? { automations: parseJson(r.automations) as string[] } : {}),
  created_at: r.created_at,
  created_by: r.created_by,
  ...(r.last_used_at ? { last_used_at: r.last_used_at } : {}),
  ...(r.revoked_at ? { revoked_at: r.revoked_at } : {}),
});

/**
 * API keys (migration 0001_accounts): the hash of the key only. `touchAfterMs`: a use younger than
 * this after the stored `last_used_at` writes nothing.
 */
export function sqlApiKeyStore(ctx: ServiceContext, touchAfterMs: number): ApiKeyStore {
  const keys = () =>
    ctx.db
      .selectFrom('svc_api_keys as k')
      .select([
        'k.id as id',
        'k.org_id as org_id',
        'k.name as name',
        'k.mode as mode',
        'k.hash as hash',
        'k.prefix as prefix',
        'k.last4 as last4',
        jsonText('k.automations', 'automations'),
        isoTextNotNull('k.created_at', 'created_at'),
        'k.created_by as created_by',
        isoText('k.last_used_at', 'last_used_at'),
        isoText('k.revoked_at', 'revoked_at'),
      ]);
  return {
    create: (k) =>
      ctx.guard('apiKeys.create', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_api_keys')
              .values({
                id: k.id,
                org_id: k.org_id,
                name: k.name,
                mode: k.mode,
                hash: k.hash,
                prefix: k.prefix,
                last4: k.last4,
                automations: jsonbOrNull(k.automations),
                created_at: timestamptz('created_at', k.created_at),
                created_by: k.created_by,
                last_used_at: timestamptzOrNull('last_used_at', k.last_used_at),
                revoked_at: timestamptzOrNull('revoked_at', k.revoked_at),
              })
              .execute(),
          (constraint) => (constraint.includes('hash') ? 'hash' : 'id'),
        ),
      ),
    getByHash: (hash) =>
      ctx.guard('apiKeys.getByHash', async () => {
        const row = await keys().where('k.hash', '=', hash).executeTakeFirst();
        return row ? toKey(row) : undefined;
      }),
    getWithOrgByHash: (hash) =>
      ctx.guard('apiKeys.getWithOrgByHash', async () => {
        const row = await keys()
          .innerJoin('svc_orgs as o', 'o.id', 'k.org_id')
          .select(['o.name as org_name', isoTextNotNull('o.created_at', 'org_created_at')])
          .where('k.hash', '=', hash)
          .executeTakeFirst();
        return row ? { key: toKey(row), org: { id: row.org_id, name: row.org_name, created_at: row.org_created_at } } : undefined;
      }),
    list: (orgId) =>
      ctx.guard('apiKeys.list', async () => {
        const rows = await keys().where('k.org_id', '=', orgId).orderBy('k.created_at', 'desc').orderBy('k.id', 'desc').execute();
        return rows.map(toKey);
      }),
    revoke: (orgId, id, at) =>
      ctx.guard('apiKeys.revoke', async () => {
        const res = await ctx.db
          .updateTable('svc_api_keys')
          .set({ revoked_at: timestamptz('revoked_at', at) })
          .where('org_id', '=', orgId)
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) > 0;
      }),
    touch: (id, at) =>
      ctx.guard('apiKeys.touch', async () => {
        const cutoff = new Date(new Date(at).getTime() - touchAfterMs).toISOString();
        await ctx.db
          .updateTable('svc_api_keys')
          .set({ last_used_at: timestamptz('last_used_at', at) })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', timestamptz('cutoff', cutoff))]))
          .execute();
      }),
  };
}
