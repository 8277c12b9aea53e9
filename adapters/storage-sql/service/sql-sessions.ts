import { sql } from 'kysely';
import type { Role, SessionRecord, SessionStore } from '../../../src/ports/service-storage.js';
import { isoText, isoTextNotNull, table, timestamptz, timestamptzOrNull } from '../sql-values.js';
import type { ServiceContext } from './service-context.js';

interface SessionRow {
  id: string;
  user_id: string;
  org_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** A row of `svc_session_lookup` (migration 0004_session_lookup): the session, its user and org, one membership. */
interface LookupRow extends SessionRow {
  email: string;
  org_name: string;
  org_created_at: string;
  role: Role | null;
  m_org_id: string | null;
  m_org_name: string;
  m_org_created_at: string;
}

const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id,
  user_id: r.user_id,
  org_id: r.org_id,
  created_at: r.created_at,
  expires_at: r.expires_at,
  ...(r.revoked_at ? { revoked_at: r.revoked_at } : {}),
});

/** Sessions (migration 0001_accounts); `lookup` is the check every dashboard request makes. */
export function sqlSessionStore(ctx: ServiceContext): SessionStore {
  const sessions = () =>
    ctx.db
      .selectFrom('svc_sessions')
      .select([
        'id',
        'user_id',
        'org_id',
        isoTextNotNull('created_at', 'created_at'),
        isoTextNotNull('expires_at', 'expires_at'),
        isoText('revoked_at', 'revoked_at'),
      ]);
  return {
    create: (s) =>
      ctx.guard('sessions.create', async () => {
        await ctx.db
          .insertInto('svc_sessions')
          .values({
            id: s.id,
            user_id: s.user_id,
            org_id: s.org_id,
            created_at: timestamptz('created_at', s.created_at),
            expires_at: timestamptz('expires_at', s.expires_at),
            revoked_at: timestamptzOrNull('revoked_at', s.revoked_at),
          })
          .execute();
      }),
    get: (id) =>
      ctx.guard('sessions.get', async () => {
        const row = await sessions().where('id', '=', id).executeTakeFirst();
        return row ? toSession(row) : undefined;
      }),
    lookup: (id) =>
      ctx.guard('sessions.lookup', async () => {
        // One round trip: the session, its user and active org, and every membership of the user,
        // through a function whose plan the connection keeps (migration 0004_session_lookup).
        const { rows } = await sql<LookupRow>`select * from ${table(ctx, 'svc_session_lookup')}(${id})`.execute(ctx.db);
        const first = rows[0];
        if (first === undefined) return undefined;
        const orgs = rows.flatMap((r) =>
          r.m_org_id !== null && r.role !== null ? [{ org: { id: r.m_org_id, name: r.m_org_name, created_at: r.m_org_created_at }, role: r.role }] : [],
        );
        const role = orgs.find((o) => o.org.id === first.org_id)?.role;
        return {
          session: toSession(first),
          user: { id: first.user_id, email: first.email },
          org: { id: first.org_id, name: first.org_name, created_at: first.org_created_at },
          ...(role ? { role } : {}),
          orgs,
        };
      }),
    setOrg: (id, orgId) =>
      ctx.guard('sessions.setOrg', async () => {
        await ctx.db.updateTable('svc_sessions').set({ org_id: orgId }).where('id', '=', id).execute();
      }),
    revoke: (id, at) =>
      ctx.guard('sessions.revoke', async () => {
        await ctx.db
          .updateTable('svc_sessions')
          .set({ revoked_at: timestamptz('revoked_at', at) })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
      }),
    revokeForMember: (orgId, userId, at) =>
      ctx.guard('sessions.revokeForMember', async () => {
        const res = await ctx.db
          .updateTable('svc_sessions')
          .set({ revoked_at: timestamptz('revoked_at', at) })
          .where('org_id', '=', orgId)
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        return Number(res.numUpdatedRows);
      }),
  };
}
