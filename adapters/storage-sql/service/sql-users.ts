import type { OrgStore, UserStore } from '../../../src/ports/service-storage.js';
import { isoTextNotNull, timestamptz } from '../sql-values.js';
import { insertUnique, type ServiceContext } from './service-context.js';

/** Users (migration 0001_accounts): the email is unique, lowercased by the service. */
export function sqlUserStore(ctx: ServiceContext): UserStore {
  const users = () => ctx.db.selectFrom('svc_users').select(['id', 'email', 'password_hash', isoTextNotNull('created_at', 'created_at')]);
  return {
    create: (u) =>
      ctx.guard('users.create', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_users')
              .values({ id: u.id, email: u.email, password_hash: u.password_hash, created_at: timestamptz('created_at', u.created_at) })
              .execute(),
          (constraint) => (constraint.includes('email') ? 'email' : 'id'),
        ),
      ),
    get: (id) => ctx.guard('users.get', () => users().where('id', '=', id).executeTakeFirst()),
    getByEmail: (email) => ctx.guard('users.getByEmail', () => users().where('email', '=', email).executeTakeFirst()),
    setPasswordHash: (id, hash) =>
      ctx.guard('users.setPasswordHash', async () => {
        await ctx.db.updateTable('svc_users').set({ password_hash: hash }).where('id', '=', id).execute();
      }),
  };
}

/** Orgs (migration 0001_accounts). */
export function sqlOrgStore(ctx: ServiceContext): OrgStore {
  return {
    create: (o) =>
      ctx.guard('orgs.create', () =>
        insertUnique(
          () =>
            ctx.db
              .insertInto('svc_orgs')
              .values({ id: o.id, name: o.name, created_at: timestamptz('created_at', o.created_at) })
              .execute(),
          () => 'id',
        ),
      ),
    get: (id) =>
      ctx.guard('orgs.get', () =>
        ctx.db
          .selectFrom('svc_orgs')
          .select(['id', 'name', isoTextNotNull('created_at', 'created_at')])
          .where('id', '=', id)
          .executeTakeFirst(),
      ),
  };
}
