import type { OAuthGrantRecord, OAuthModelRecord, OAuthStore } from '../../../src/ports/service-storage.js';
import { isoText, isoTextNotNull, jsonbOrNull, jsonText, parseJson, timestamptz, timestamptzOrNull } from '../sql-values.js';
import { insertUnique, type ServiceContext } from './service-context.js';

/**
 * OAuth records (migration 0010_oauth): the library's models under hashed ids, the grants users gave
 * clients, and the server's sealed keys. An expired model record reads as absent (and is deleted on
 * the way, so the table does not keep dead tokens).
 */

interface ModelRow {
  model: string;
  key: string;
  payload: string;
  grant_hash: string | null;
  uid: string | null;
  user_code: string | null;
  expires_at: string;
  consumed_at: string | null;
}

const toModel = (r: ModelRow): OAuthModelRecord => ({
  model: r.model,
  key: r.key,
  payload: r.payload,
  ...(r.grant_hash !== null ? { grant: r.grant_hash } : {}),
  ...(r.uid !== null ? { uid: r.uid } : {}),
  ...(r.user_code !== null ? { user_code: r.user_code } : {}),
  expires_at: r.expires_at,
  ...(r.consumed_at !== null ? { consumed_at: r.consumed_at } : {}),
});

interface GrantRow {
  id: string;
  org_id: string;
  grant_hash: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  mode: 'live' | 'test';
  automations: string | null;
  created_at: string;
  created_by: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const toGrant = (r: GrantRow): OAuthGrantRecord => ({
  id: r.id,
  org_id: r.org_id,
  grant_hash: r.grant_hash,
  client_id: r.client_id,
  client_name: r.client_name,
  redirect_host: r.redirect_host,
  mode: r.mode,
  ...(r.automations !== null ? { automations: parseJson(r.automations) as string[] } : {}),
  created_at: r.created_at,
  created_by: r.created_by,
  ...(r.last_used_at !== null ? { last_used_at: r.last_used_at } : {}),
  ...(r.revoked_at !== null ? { revoked_at: r.revoked_at } : {}),
});

export function sqlOAuthStore(ctx: ServiceContext): OAuthStore {
  const models = () =>
    ctx.db
      .selectFrom('svc_oauth_models as m')
      .select([
        'm.model as model',
        'm.key as key',
        'm.payload as payload',
        'm.grant_hash as grant_hash',
        'm.uid as uid',
        'm.user_code as user_code',
        isoTextNotNull('m.expires_at', 'expires_at'),
        isoText('m.consumed_at', 'consumed_at'),
      ]);
  const grants = () =>
    ctx.db
      .selectFrom('svc_oauth_grants as g')
      .select([
        'g.id as id',
        'g.org_id as org_id',
        'g.grant_hash as grant_hash',
        'g.client_id as client_id',
        'g.client_name as client_name',
        'g.redirect_host as redirect_host',
        'g.mode as mode',
        jsonText('g.automations', 'automations'),
        isoTextNotNull('g.created_at', 'created_at'),
        'g.created_by as created_by',
        isoText('g.last_used_at', 'last_used_at'),
        isoText('g.revoked_at', 'revoked_at'),
      ]);
  const live = async (row: ModelRow | undefined, now: string): Promise<OAuthModelRecord | undefined> => {
    if (!row) return undefined;
    if (Date.parse(row.expires_at) <= Date.parse(now)) {
      await ctx.db.deleteFrom('svc_oauth_models').where('model', '=', row.model).where('key', '=', row.key).execute();
      return undefined;
    }
    return toModel(row);
  };
  return {
    upsert: (r) =>
      ctx.guard('oauth.upsert', async () => {
        const values = {
          payload: r.payload,
          grant_hash: r.grant ?? null,
          uid: r.uid ?? null,
          user_code: r.user_code ?? null,
          expires_at: timestamptz('expires_at', r.expires_at),
          consumed_at: timestamptzOrNull('consumed_at', r.consumed_at),
        };
        await ctx.db
          .insertInto('svc_oauth_models')
          .values({ model: r.model, key: r.key, ...values })
          .onConflict((oc) => oc.columns(['model', 'key']).doUpdateSet(values))
          .execute();
      }),
    find: (model, key, now) =>
      ctx.guard('oauth.find', async () => live(await models().where('m.model', '=', model).where('m.key', '=', key).executeTakeFirst(), now)),
    findByUid: (model, uid, now) =>
      ctx.guard('oauth.findByUid', async () => live(await models().where('m.model', '=', model).where('m.uid', '=', uid).executeTakeFirst(), now)),
    findByUserCode: (model, code, now) =>
      ctx.guard('oauth.findByUserCode', async () => live(await models().where('m.model', '=', model).where('m.user_code', '=', code).executeTakeFirst(), now)),
    consume: (model, key, at) =>
      ctx.guard('oauth.consume', async () => {
        await ctx.db
          .updateTable('svc_oauth_models')
          .set({ consumed_at: timestamptz('consumed_at', at) })
          .where('model', '=', model)
          .where('key', '=', key)
          .where('consumed_at', 'is', null)
          .execute();
      }),
    destroy: (model, key) =>
      ctx.guard('oauth.destroy', async () => {
        await ctx.db.deleteFrom('svc_oauth_models').where('model', '=', model).where('key', '=', key).execute();
      }),
    revokeByGrant: (grant) =>
      ctx.guard('oauth.revokeByGrant', async () => {
        await ctx.db.deleteFrom('svc_oauth_models').where('grant_hash', '=', grant).execute();
      }),
    putSecretOnce: (name, value) =>
      ctx.guard('oauth.putSecretOnce', async () => {
        await ctx.db
          .insertInto('svc_oauth_secrets')
          .values({ name, value })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
        const row = await ctx.db.selectFrom('svc_oauth_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
        return row.value;
      }),
    createGrant: (g) =>
      ctx.guard('oauth.createGrant', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_oauth_grants')
              .values({
                id: g.id,
                org_id: g.org_id,
                grant_hash: g.grant_hash,
                client_id: g.client_id,
                client_name: g.client_name,
                redirect_host: g.redirect_host,
                mode: g.mode,
                automations: jsonbOrNull(g.automations),
                created_at: timestamptz('created_at', g.created_at),
                created_by: g.created_by,
                last_used_at: timestamptzOrNull('last_used_at', g.last_used_at),
                revoked_at: timestamptzOrNull('revoked_at', g.revoked_at),
              })
              .execute(),
          (constraint) => (constraint.includes('grant_hash') ? 'grant_hash' : 'id'),
        ),
      ),
    grantByHash: (hash) =>
      ctx.guard('oauth.grantByHash', async () => {
        const row = await grants().where('g.grant_hash', '=', hash).executeTakeFirst();
        return row ? toGrant(row) : undefined;
      }),
    listGrants: (orgId) =>
      ctx.guard('oauth.listGrants', async () => {
        const rows = await grants().where('g.org_id', '=', orgId).orderBy('g.created_at', 'desc').orderBy('g.id', 'desc').execute();
        return rows.map(toGrant);
      }),
    revokeGrant: (orgId, id, at) =>
      ctx.guard('oauth.revokeGrant', async () => {
        const res = await ctx.db
          .updateTable('svc_oauth_grants')
          .set({ revoked_at: timestamptz('revoked_at', at) })
          .where('org_id', '=', orgId)
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) > 0;
      }),
    touchGrant: (id, at) =>
      ctx.guard('oauth.touchGrant', async () => {
        const cutoff = new Date(Date.parse(at) - 60_000).toISOString();
        await ctx.db
          .updateTable('svc_oauth_grants')
          .set({ last_used_at: timestamptz('last_used_at', at) })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', timestamptz('cutoff', cutoff))]))
          .execute();
      }),
  };
}
