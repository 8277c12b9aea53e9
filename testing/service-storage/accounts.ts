import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../src/ports/service-storage.js';
import { rejectsWith, uid, at, type Suite } from './shared.js';

/** Users, orgs, members and the last-owner rule (also under concurrent demotions), sessions, API keys (hash only, revocation, scope). */
export function describeAccounts(suite: Suite): void {
  describe('users and orgs', () => {
    it('creates a user and reads it back independently, by id and by email', async () => {
      const user = { id: uid('user'), email: 'ada@example.test', password_hash: '$argon2id$v=19$m=1,t=1,p=1$a$b', created_at: at(1) };
      await suite.storage.users.create(user);
      const other = await suite.independent();
      expect(await other.users.get(user.id)).toEqual(user);
      expect(await other.users.getByEmail('ada@example.test')).toEqual(user);
      expect(await other.users.getByEmail('nobody@example.test')).toBeUndefined();
    });

    it('refuses a taken email with conflict (field email); the first user is unchanged', async () => {
      const first = { id: uid('user'), email: 'lin@example.test', password_hash: 'h1', created_at: at(1) };
      await suite.storage.users.create(first);
      const err = await rejectsWith(suite.storage.users.create({ ...first, id: uid('user'), password_hash: 'h2' }), 'conflict');
      expect((err as { data: { field: string } }).data.field).toBe('email');
      expect(await (await suite.independent()).users.get(first.id)).toEqual(first);
    });

    it('updates a password hash', async () => {
      const user = { id: uid('user'), email: `${uid('p')}@example.test`, password_hash: 'old', created_at: at(1) };
      await suite.storage.users.create(user);
      await suite.storage.users.setPasswordHash(user.id, 'new');
      expect((await (await suite.independent()).users.get(user.id))?.password_hash).toBe('new');
    });

    it('creates an org and reads it back', async () => {
      const org = { id: uid('org'), name: 'Ünïcode Org 🚀', created_at: at(2) };
      await suite.storage.orgs.create(org);
      expect(await (await suite.independent()).orgs.get(org.id)).toEqual(org);
      expect(await suite.storage.orgs.get('missing')).toBeUndefined();
    });
  });

  describe('members', () => {
    it("lists members with emails oldest first, and a user's orgs with roles", async () => {
      const { org, users } = await suite.seedOrg(1, 2);
      const list = await (await suite.independent()).members.list(org.id);
      expect(list.map((m) => [m.user_id, m.role])).toEqual([
        [users[0], 'owner'],
        [users[1], 'member'],
        [users[2], 'member'],
      ]);
      expect(list.every((m) => m.email.endsWith('@example.test') && m.org_id === org.id)).toBe(true);
      const orgs = await suite.storage.members.orgsOf(users[1]!);
      expect(orgs).toEqual([{ org, role: 'member' }]);
    });

    it('refuses a second membership with conflict', async () => {
      const { org, users } = await suite.seedOrg(1);
      await rejectsWith(suite.storage.members.add({ org_id: org.id, user_id: users[0]!, role: 'member', created_at: at(5) }), 'conflict');
      expect((await suite.storage.members.get(org.id, users[0]!))?.role).toBe('owner');
    });

    it('changes roles, and refuses to demote or remove the last owner (last_owner)', async () => {
      const { org, users } = await suite.seedOrg(1, 1);
      expect(await suite.storage.members.setRole(org.id, users[1]!, 'owner')).toMatchObject({ user_id: users[1], role: 'owner' });
      expect(await suite.storage.members.setRole(org.id, users[0]!, 'member')).toMatchObject({ role: 'member' });
      await rejectsWith(suite.storage.members.setRole(org.id, users[1]!, 'member'), 'last_owner');
      await rejectsWith(suite.storage.members.remove(org.id, users[1]!), 'last_owner');
      const other = await suite.independent();
      expect((await other.members.get(org.id, users[1]!))?.role).toBe('owner');
      expect(await suite.storage.members.remove(org.id, users[0]!)).toBe(true);
      expect(await other.members.get(org.id, users[0]!)).toBeUndefined();
      expect(await suite.storage.members.remove(org.id, users[0]!)).toBe(false);
      expect(await suite.storage.members.setRole(org.id, 'nobody', 'owner')).toBeUndefined();
    });

    it('two concurrent demotions of the last two owners: exactly one succeeds, one owner remains', async () => {
      const { org, users } = await suite.seedOrg(2);
      const other = await suite.independent();
      const results = await Promise.allSettled([
        suite.storage.members.setRole(org.id, users[0]!, 'member'),
        other.members.setRole(org.id, users[1]!, 'member'),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(failed.reason.code).toBe('last_owner');
      const owners = (await suite.storage.members.list(org.id)).filter((m) => m.role === 'owner');
      expect(owners).toHaveLength(1);
    });

    it('a concurrent removal and demotion of the last two owners leave one owner', async () => {
      const { org, users } = await suite.seedOrg(2);
      const other = await suite.independent();
      await Promise.allSettled([suite.storage.members.remove(org.id, users[0]!), other.members.setRole(org.id, users[1]!, 'member')]);
      const owners = (await suite.storage.members.list(org.id)).filter((m) => m.role === 'owner');
      expect(owners).toHaveLength(1);
    });
  });

  describe('sessions', () => {
    it('creates, switches org, revokes; revoking twice keeps the first time', async () => {
      const { org, users } = await suite.seedOrg(1);
      const org2 = { id: uid('org'), name: 'Two', created_at: at(3) };
      await suite.storage.orgs.create(org2);
      const s = { id: uid('sess'), user_id: users[0]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
      await suite.storage.sessions.create(s);
      const other = await suite.independent();
      expect(await other.sessions.get(s.id)).toEqual(s);
      expect(await other.sessions.lookup(s.id)).toEqual({
        session: s,
        user: { id: users[0], email: expect.any(String) },
        org,
        role: 'owner',
        orgs: [{ org, role: 'owner' }],
      });
      expect(await other.sessions.lookup('missing')).toBeUndefined();
      await suite.storage.sessions.setOrg(s.id, org2.id);
      // Not a member of org2: the lookup says so (no role).
      expect((await other.sessions.lookup(s.id))?.role).toBeUndefined();
      expect((await other.sessions.get(s.id))?.org_id).toBe(org2.id);
      await suite.storage.sessions.revoke(s.id, at(11));
      await suite.storage.sessions.revoke(s.id, at(12));
      expect((await other.sessions.get(s.id))?.revoked_at).toBe(at(11));
    });

    it('revokes every live session of a member in that org only', async () => {
      const { org, users } = await suite.seedOrg(1, 1);
      const { org: orgB } = await suite.seedOrg(1);
      await suite.storage.members.add({ org_id: orgB.id, user_id: users[1]!, role: 'member', created_at: at(4) });
      const inA = { id: uid('sess'), user_id: users[1]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
      const inB = { id: uid('sess'), user_id: users[1]!, org_id: orgB.id, created_at: at(10), expires_at: at(20) };
      const owner = { id: uid('sess'), user_id: users[0]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
      for (const s of [inA, inB, owner]) await suite.storage.sessions.create(s);
      expect(await suite.storage.sessions.revokeForMember(org.id, users[1]!, at(15))).toBe(1);
      const other = await suite.independent();
      expect((await other.sessions.get(inA.id))?.revoked_at).toBe(at(15));
      expect((await other.sessions.get(inB.id))?.revoked_at).toBeUndefined();
      expect((await other.sessions.get(owner.id))?.revoked_at).toBeUndefined();
    });
  });

  describe('API keys', () => {
    const key = (orgId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: uid('key'),
      org_id: orgId,
      name: 'ci',
      mode: 'live',
      hash: createHash('sha256').update(uid('h')).digest('hex'),
      prefix: 'svc_live_AbCd',
      last4: 'wxyz',
      created_at: at(5),
      created_by: 'user-1',
      ...over,
    });

    it('stores a key by hash with its scope; lists newest first; revocation is per org', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const k1 = key(org.id, { automations: ['invoice', 'refund'] });
      const k2 = key(org.id, { created_at: at(6), mode: 'test', hash: 'b'.repeat(64) });
      await suite.storage.apiKeys.create(k1);
      await suite.storage.apiKeys.create(k2);
      const other = await suite.independent();
      expect(await other.apiKeys.getByHash(k1.hash)).toEqual(k1);
      expect(await other.apiKeys.getWithOrgByHash(k1.hash)).toEqual({ key: k1, org });
      expect(await other.apiKeys.getWithOrgByHash('c'.repeat(64))).toBeUndefined();
      expect((await other.apiKeys.list(org.id)).map((k) => k.id)).toEqual([k2.id, k1.id]);
      expect(await other.apiKeys.list(orgB.id)).toEqual([]);
      expect(await suite.storage.apiKeys.revoke(orgB.id, k1.id, at(7))).toBe(false);
      expect((await other.apiKeys.getByHash(k1.hash))?.revoked_at).toBeUndefined();
      expect(await suite.storage.apiKeys.revoke(org.id, k1.id, at(7))).toBe(true);
      expect(await suite.storage.apiKeys.revoke(org.id, k1.id, at(8))).toBe(false);
      expect((await other.apiKeys.getByHash(k1.hash))?.revoked_at).toBe(at(7));
      await rejectsWith(suite.storage.apiKeys.create({ ...key(org.id), hash: k1.hash }), 'conflict');
    });

    it('touch records last use, skipping a write while the stored value is recent', async () => {
      const { org } = await suite.seedOrg(1);
      const k = key(org.id, { hash: 'c'.repeat(64) });
      await suite.storage.apiKeys.create(k);
      await suite.storage.apiKeys.touch(k.id, at(100));
      await suite.storage.apiKeys.touch(k.id, at(101));
      const other = await suite.independent();
      expect((await other.apiKeys.getByHash(k.hash))?.last_used_at).toBe(at(100));
      const later = new Date(Date.parse(at(100)) + 24 * 3600_000).toISOString();
      await suite.storage.apiKeys.touch(k.id, later);
      expect((await other.apiKeys.getByHash(k.hash))?.last_used_at).toBe(later);
    });
  });
}
