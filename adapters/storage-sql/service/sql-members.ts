import { FlowError, prefixed } from '../../../src/errors.js';
import type { MemberStore } from '../../../src/ports/service-storage.js';
import { isoTextNotNull, timestamptz } from '../sql-values.js';
import { COMPONENT, inTx, insertUnique, lockOrg, type ServiceContext, type ServiceDb } from './service-context.js';

const lastOwnerError = () => new FlowError('last_owner', prefixed(COMPONENT, 'an org must keep at least one owner'), { data: { rule: 'last_owner' } });

/**
 * Owners of an org, the org's row locked first (service-context.ts `lockOrg`): every owner change
 * of the org queues behind it, whatever member it touches, so the last-owner check and its write
 * are atomic on Postgres; PGlite has one connection.
 */
async function lockedOwners(tx: ServiceDb, orgId: string): Promise<string[]> {
  await lockOrg(tx, orgId);
  const rows = await tx.selectFrom('svc_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').execute();
  return rows.map((r) => r.user_id);
}

/** Memberships (migration 0001_accounts) and the last-owner rule. */
export function sqlMemberStore(ctx: ServiceContext): MemberStore {
  const member = (db: ServiceDb, orgId: string, userId: string) =>
    db
      .selectFrom('svc_members')
      .select(['org_id', 'user_id', 'role', isoTextNotNull('created_at', 'created_at')])
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  return {
    add: (m) =>
      ctx.guard('members.add', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_members')
              .values({ org_id: m.org_id, user_id: m.user_id, role: m.role, created_at: timestamptz('created_at', m.created_at) })
              .execute(),
          () => 'user_id',
        ),
      ),
    get: (orgId, userId) => ctx.guard('members.get', () => member(ctx.db, orgId, userId)),
    list: (orgId) =>
      ctx.guard('members.list', () =>
        ctx.db
          .selectFrom('svc_members as m')
          .innerJoin('svc_users as u', 'u.id', 'm.user_id')
          .select(['m.org_id as org_id', 'm.user_id as user_id', 'm.role as role', 'u.email as email', isoTextNotNull('m.created_at', 'created_at')])
          .where('m.org_id', '=', orgId)
          .orderBy('m.created_at')
          .orderBy('m.user_id')
          .execute(),
      ),
    orgsOf: (userId) =>
      ctx.guard('members.orgsOf', async () => {
        const rows = await ctx.db
          .selectFrom('svc_members as m')
          .innerJoin('svc_orgs as o', 'o.id', 'm.org_id')
          .select(['o.id as id', 'o.name as name', isoTextNotNull('o.created_at', 'created_at'), 'm.role as role'])
          .where('m.user_id', '=', userId)
          .orderBy('m.created_at')
          .orderBy('o.id')
          .execute();
        return rows.map((r) => ({ org: { id: r.id, name: r.name, created_at: r.created_at }, role: r.role }));
      }),
    setRole: (orgId, userId, role) =>
      ctx.guard('members.setRole', () =>
        inTx(ctx, async (tx) => {
          const owners = await lockedOwners(tx, orgId);
          const current = await member(tx, orgId, userId);
          if (!current) return undefined;
          if (current.role === 'owner' && role !== 'owner' && owners.length <= 1) throw lastOwnerError();
          await tx.updateTable('svc_members').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
          return { ...current, role };
        }),
      ),
    remove: (orgId, userId) =>
      ctx.guard('members.remove', () =>
        inTx(ctx, async (tx) => {
          const owners = await lockedOwners(tx, orgId);
          if (owners.includes(userId) && owners.length <= 1) throw lastOwnerError();
          const res = await tx.deleteFrom('svc_members').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
          return Number(res.numDeletedRows) > 0;
        }),
      ),
  };
}
