import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFlowError } from '../src/errors.js';
import type { ApiKeyRecord, ServiceStorage } from '../src/ports/service-storage.js';
import { appendAuditEntry, sealAuditEntry, verifyAuditChain, type AuditDraft } from '../src/audit/chain.js';

export interface ServiceStorageConformanceOptions {
  /** Shown in the describe title. */
  name: string;
  /** A fresh, empty service storage. The suite calls init() and dispose() itself. */
  create: () => Promise<ServiceStorage>;
  /**
   * An independent instance over the same data (a second connection), so writes are checked through
   * a read path the writer does not share. Default: the same instance.
   */
  reopen?: (storage: ServiceStorage) => Promise<ServiceStorage>;
  /** Whether two transactions can really run at once (Postgres: yes; PGlite: one connection). */
  concurrentTransactions?: boolean;
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<unknown> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(isFlowError(caught), `expected FlowError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
  return caught;
}

let counter = 0;
const uid = (p: string) => `${p}-${process.pid}-${++counter}`;
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

/**
 * The conformance suite of the hosted service's storage port (src/ports/service-storage.ts): users,
 * orgs, members and the last-owner rule (also under concurrent demotions), sessions, API keys (hash
 * only, revocation, scope), the audit chain, and transactions (commit, rollback). Writes are checked
 * through `reopen`.
 */
export function describeServiceStorageConformance(options: ServiceStorageConformanceOptions): void {
  describe(`service storage conformance: ${options.name}`, () => {
    let storage: ServiceStorage;
    const opened: ServiceStorage[] = [];
    const open = async (s: ServiceStorage) => {
      await s.init();
      opened.push(s);
      return s;
    };
    const independent = async () => (options.reopen ? open(await options.reopen(storage)) : storage);

    beforeEach(async () => {
      storage = await open(await options.create());
    });
    afterEach(async () => {
      for (const s of opened.splice(0).reverse()) await s.dispose();
    });

    const seedOrg = async (owners: number, members = 0) => {
      const org = { id: uid('org'), name: 'Acme', created_at: at(0) };
      await storage.orgs.create(org);
      const users: string[] = [];
      for (let i = 0; i < owners + members; i++) {
        const user = { id: uid('user'), email: `${uid('u')}@example.test`, password_hash: '$argon2id$x', created_at: at(i) };
        await storage.users.create(user);
        await storage.members.add({ org_id: org.id, user_id: user.id, role: i < owners ? 'owner' : 'member', created_at: at(i + 1) });
        users.push(user.id);
      }
      return { org, users };
    };

    it('is ready once initialised', async () => {
      expect(await storage.ready()).toBe(true);
    });

    describe('users and orgs', () => {
      it('creates a user and reads it back independently, by id and by email', async () => {
        const user = { id: uid('user'), email: 'ada@example.test', password_hash: '$argon2id$v=19$m=1,t=1,p=1$a$b', created_at: at(1) };
        await storage.users.create(user);
        const other = await independent();
        expect(await other.users.get(user.id)).toEqual(user);
        expect(await other.users.getByEmail('ada@example.test')).toEqual(user);
        expect(await other.users.getByEmail('nobody@example.test')).toBeUndefined();
      });

      it('refuses a taken email with conflict (field email); the first user is unchanged', async () => {
        const first = { id: uid('user'), email: 'lin@example.test', password_hash: 'h1', created_at: at(1) };
        await storage.users.create(first);
        const err = await rejectsWith(storage.users.create({ ...first, id: uid('user'), password_hash: 'h2' }), 'conflict');
        expect((err as { data: { field: string } }).data.field).toBe('email');
        expect(await (await independent()).users.get(first.id)).toEqual(first);
      });

      it('updates a password hash', async () => {
        const user = { id: uid('user'), email: `${uid('p')}@example.test`, password_hash: 'old', created_at: at(1) };
        await storage.users.create(user);
        await storage.users.setPasswordHash(user.id, 'new');
        expect((await (await independent()).users.get(user.id))?.password_hash).toBe('new');
      });

      it('creates an org and reads it back', async () => {
        const org = { id: uid('org'), name: 'Ünïcode Org 🚀', created_at: at(2) };
        await storage.orgs.create(org);
        expect(await (await independent()).orgs.get(org.id)).toEqual(org);
        expect(await storage.orgs.get('missing')).toBeUndefined();
      });
    });

    describe('members', () => {
      it("lists members with emails oldest first, and a user's orgs with roles", async () => {
        const { org, users } = await seedOrg(1, 2);
        const list = await (await independent()).members.list(org.id);
        expect(list.map((m) => [m.user_id, m.role])).toEqual([
          [users[0], 'owner'],
          [users[1], 'member'],
          [users[2], 'member'],
        ]);
        expect(list.every((m) => m.email.endsWith('@example.test') && m.org_id === org.id)).toBe(true);
        const orgs = await storage.members.orgsOf(users[1]!);
        expect(orgs).toEqual([{ org, role: 'member' }]);
      });

      it('refuses a second membership with conflict', async () => {
        const { org, users } = await seedOrg(1);
        await rejectsWith(storage.members.add({ org_id: org.id, user_id: users[0]!, role: 'member', created_at: at(5) }), 'conflict');
        expect((await storage.members.get(org.id, users[0]!))?.role).toBe('owner');
      });

      it('changes roles, and refuses to demote or remove the last owner (last_owner)', async () => {
        const { org, users } = await seedOrg(1, 1);
        expect(await storage.members.setRole(org.id, users[1]!, 'owner')).toMatchObject({ user_id: users[1], role: 'owner' });
        expect(await storage.members.setRole(org.id, users[0]!, 'member')).toMatchObject({ role: 'member' });
        await rejectsWith(storage.members.setRole(org.id, users[1]!, 'member'), 'last_owner');
        await rejectsWith(storage.members.remove(org.id, users[1]!), 'last_owner');
        const other = await independent();
        expect((await other.members.get(org.id, users[1]!))?.role).toBe('owner');
        expect(await storage.members.remove(org.id, users[0]!)).toBe(true);
        expect(await other.members.get(org.id, users[0]!)).toBeUndefined();
        expect(await storage.members.remove(org.id, users[0]!)).toBe(false);
        expect(await storage.members.setRole(org.id, 'nobody', 'owner')).toBeUndefined();
      });

      it('two concurrent demotions of the last two owners: exactly one succeeds, one owner remains', async () => {
        const { org, users } = await seedOrg(2);
        const other = await independent();
        const results = await Promise.allSettled([storage.members.setRole(org.id, users[0]!, 'member'), other.members.setRole(org.id, users[1]!, 'member')]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(failed.reason.code).toBe('last_owner');
        const owners = (await storage.members.list(org.id)).filter((m) => m.role === 'owner');
        expect(owners).toHaveLength(1);
      });

      it('a concurrent removal and demotion of the last two owners leave one owner', async () => {
        const { org, users } = await seedOrg(2);
        const other = await independent();
        await Promise.allSettled([storage.members.remove(org.id, users[0]!), other.members.setRole(org.id, users[1]!, 'member')]);
        const owners = (await storage.members.list(org.id)).filter((m) => m.role === 'owner');
        expect(owners).toHaveLength(1);
      });
    });

    describe('sessions', () => {
      it('creates, switches org, revokes; revoking twice keeps the first time', async () => {
        const { org, users } = await seedOrg(1);
        const org2 = { id: uid('org'), name: 'Two', created_at: at(3) };
        await storage.orgs.create(org2);
        const s = { id: uid('sess'), user_id: users[0]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
        await storage.sessions.create(s);
        const other = await independent();
        expect(await other.sessions.get(s.id)).toEqual(s);
        expect(await other.sessions.lookup(s.id)).toEqual({
          session: s,
          user: { id: users[0], email: expect.any(String) },
          org,
          role: 'owner',
          orgs: [{ org, role: 'owner' }],
        });
        expect(await other.sessions.lookup('missing')).toBeUndefined();
        await storage.sessions.setOrg(s.id, org2.id);
        // Not a member of org2: the lookup says so (no role).
        expect((await other.sessions.lookup(s.id))?.role).toBeUndefined();
        expect((await other.sessions.get(s.id))?.org_id).toBe(org2.id);
        await storage.sessions.revoke(s.id, at(11));
        await storage.sessions.revoke(s.id, at(12));
        expect((await other.sessions.get(s.id))?.revoked_at).toBe(at(11));
      });

      it('revokes every live session of a member in that org only', async () => {
        const { org, users } = await seedOrg(1, 1);
        const { org: orgB } = await seedOrg(1);
        await storage.members.add({ org_id: orgB.id, user_id: users[1]!, role: 'member', created_at: at(4) });
        const inA = { id: uid('sess'), user_id: users[1]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
        const inB = { id: uid('sess'), user_id: users[1]!, org_id: orgB.id, created_at: at(10), expires_at: at(20) };
        const owner = { id: uid('sess'), user_id: users[0]!, org_id: org.id, created_at: at(10), expires_at: at(20) };
        for (const s of [inA, inB, owner]) await storage.sessions.create(s);
        expect(await storage.sessions.revokeForMember(org.id, users[1]!, at(15))).toBe(1);
        const other = await independent();
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
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const k1 = key(org.id, { automations: ['invoice', 'refund'] });
        const k2 = key(org.id, { created_at: at(6), mode: 'test', hash: 'b'.repeat(64) });
        await storage.apiKeys.create(k1);
        await storage.apiKeys.create(k2);
        const other = await independent();
        expect(await other.apiKeys.getByHash(k1.hash)).toEqual(k1);
        expect(await other.apiKeys.getWithOrgByHash(k1.hash)).toEqual({ key: k1, org });
        expect(await other.apiKeys.getWithOrgByHash('c'.repeat(64))).toBeUndefined();
        expect((await other.apiKeys.list(org.id)).map((k) => k.id)).toEqual([k2.id, k1.id]);
        expect(await other.apiKeys.list(orgB.id)).toEqual([]);
        expect(await storage.apiKeys.revoke(orgB.id, k1.id, at(7))).toBe(false);
        expect((await other.apiKeys.getByHash(k1.hash))?.revoked_at).toBeUndefined();
        expect(await storage.apiKeys.revoke(org.id, k1.id, at(7))).toBe(true);
        expect(await storage.apiKeys.revoke(org.id, k1.id, at(8))).toBe(false);
        expect((await other.apiKeys.getByHash(k1.hash))?.revoked_at).toBe(at(7));
        await rejectsWith(storage.apiKeys.create({ ...key(org.id), hash: k1.hash }), 'conflict');
      });

      it('touch records last use, skipping a write while the stored value is recent', async () => {
        const { org } = await seedOrg(1);
        const k = key(org.id, { hash: 'c'.repeat(64) });
        await storage.apiKeys.create(k);
        await storage.apiKeys.touch(k.id, at(100));
        await storage.apiKeys.touch(k.id, at(101));
        const other = await independent();
        expect((await other.apiKeys.getByHash(k.hash))?.last_used_at).toBe(at(100));
        const later = new Date(Date.parse(at(100)) + 24 * 3600_000).toISOString();
        await storage.apiKeys.touch(k.id, later);
        expect((await other.apiKeys.getByHash(k.hash))?.last_used_at).toBe(later);
      });
    });

    describe('audit', () => {
      const draft = (orgId: string, i: number, over: Partial<AuditDraft> = {}): AuditDraft => ({
        id: uid('aud'),
        org_id: orgId,
        actor: 'u',
        target: `key:${i}`,
        at: at(i),
        metadata: { action: 'key.mint', i },
        ...over,
      });

      it('appends a hash chain per org, pages newest first, and the chain verifies', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        expect(await storage.audit.head(org.id)).toBeUndefined();
        for (let i = 0; i < 5; i++) await appendAuditEntry(storage.audit, draft(org.id, i));
        await appendAuditEntry(storage.audit, draft(orgB.id, 1, { target: 'x', metadata: { action: 'org.create' } }));
        const other = await independent();
        const all = await other.audit.all(org.id);
        expect(all.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
        expect(all[0]!.prev).toBeNull();
        expect(all[1]!.prev).toBe(all[0]!.digest);
        expect(verifyAuditChain(org.id, all)).toEqual({ ok: true, entries: 5 });
        expect(await other.audit.head(org.id)).toEqual({ seq: 4, digest: all[4]!.digest });
        const p1 = await other.audit.page(org.id, { limit: 2 });
        expect(p1.entries.map((e) => e.seq)).toEqual([4, 3]);
        const p2 = await other.audit.page(org.id, { limit: 2, beforeSeq: p1.nextBeforeSeq });
        expect(p2.entries.map((e) => e.seq)).toEqual([2, 1]);
        const p3 = await other.audit.page(org.id, { limit: 2, beforeSeq: p2.nextBeforeSeq });
        expect(p3.entries.map((e) => e.seq)).toEqual([0]);
        expect(p3.nextBeforeSeq).toBeUndefined();
        expect((await other.audit.all(orgB.id)).map((e) => e.metadata)).toEqual([{ action: 'org.create' }]);
      });

      it('stores a sealed entry as it is, only at its expected seq: audit_conflict for a taken or skipped seq', async () => {
        const { org } = await seedOrg(1);
        const first = sealAuditEntry(draft(org.id, 0), undefined);
        await storage.audit.append(first, 0);
        const other = await independent();
        // A writer that sealed against the same (empty) head lost the race: refused, nothing stored.
        const stale = sealAuditEntry(draft(org.id, 1), undefined);
        const lost = await rejectsWith(other.audit.append(stale, 0), 'audit_conflict');
        expect((lost as { data: Record<string, unknown> }).data).toMatchObject({ org_id: org.id, seq: 0 });
        // A seq past the end would leave a gap: refused too.
        const head = { seq: 1, digest: first.digest };
        await rejectsWith(other.audit.append(sealAuditEntry(draft(org.id, 2), head), 2), 'audit_conflict');
        // The expected seq is the entry's own.
        await rejectsWith(other.audit.append(sealAuditEntry(draft(org.id, 3), { seq: 0, digest: first.digest }), 0), 'invalid_record');
        expect(await storage.audit.all(org.id)).toEqual([first]);
        const second = sealAuditEntry(draft(org.id, 4), { seq: 0, digest: first.digest });
        await other.audit.append(second, 1);
        expect(await storage.audit.all(org.id)).toEqual([first, second]);
        expect(verifyAuditChain(org.id, [first, second]).ok).toBe(true);
      });

      it('of concurrent appends at one seq, exactly one goes in', async () => {
        const { org } = await seedOrg(1);
        const other = await independent();
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) => (i % 2 ? other : storage).audit.append(sealAuditEntry(draft(org.id, i), undefined), 0)),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(isFlowError(r.reason, 'audit_conflict'), String(r.reason)).toBe(true);
        expect(await storage.audit.all(org.id)).toHaveLength(1);
      });

      it('concurrent appends of one org, from two connections, never fork the chain', async () => {
        const { org } = await seedOrg(1);
        const other = await independent();
        const stored = await Promise.all(Array.from({ length: 12 }, (_, i) => appendAuditEntry((i % 2 ? other : storage).audit, draft(org.id, i))));
        const all = await storage.audit.all(org.id);
        expect(all).toHaveLength(12);
        expect(verifyAuditChain(org.id, all)).toEqual({ ok: true, entries: 12 });
        expect(new Set(all.map((e) => e.id))).toEqual(new Set(stored.map((e) => e.id)));
      });

      it('concurrent transactions that each write and append an audit entry commit one unbroken chain', async () => {
        const { org } = await seedOrg(1);
        // Two connections at once where transactions can run at once (Postgres); one otherwise.
        const writers = options.concurrentTransactions ? [storage, await independent()] : [storage];
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            writers[i % writers.length]!.transaction(async (tx) => {
              await tx.secrets.put({ org_id: org.id, name: `S${i}`, ciphertext: `c${i}`, updated_at: at(i) });
              await appendAuditEntry(tx.audit, draft(org.id, i, { target: `secret:S${i}`, metadata: { action: 'secret.create' } }));
            }),
          ),
        );
        const all = await (await independent()).audit.all(org.id);
        expect(verifyAuditChain(org.id, all)).toEqual({ ok: true, entries: 8 });
        expect(new Set(all.map((e) => e.target))).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `secret:S${i}`)));
      });
    });

    describe('automations, authoring, versions, secrets', () => {
      const automation = (orgId: string, name: string, over: Record<string, unknown> = {}) => ({
        id: uid('auto'),
        org_id: orgId,
        name,
        task: 'Do the thing',
        site: 'https://example.test',
        mcp_enabled: true,
        created_at: at(3),
        status: 'draft' as const,
        needs_attention: false,
        example: false,
        params: [{ name: 'q', required: true }],
        ...over,
      });

      it('creates, reads by id and name per org, lists, updates; names unique per org only', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const a = automation(org.id, 'invoice');
        await storage.automations.create(a);
        await storage.automations.create(automation(orgB.id, 'invoice'));
        const err = await rejectsWith(storage.automations.create(automation(org.id, 'invoice')), 'conflict');
        expect((err as { data: { field: string } }).data.field).toBe('name');
        const other = await independent();
        expect(await other.automations.get(org.id, a.id)).toEqual(a);
        expect(await other.automations.get(orgB.id, a.id)).toBeUndefined();
        expect(await other.automations.getByName(org.id, 'invoice')).toEqual(a);
        const updated = await storage.automations.update(org.id, a.id, {
          status: 'published',
          live_digest: `sha256:${'a'.repeat(64)}`,
          failing_step: 'click_2',
        });
        expect(updated).toMatchObject({ status: 'published', live_digest: `sha256:${'a'.repeat(64)}`, failing_step: 'click_2' });
        expect(await storage.automations.update(orgB.id, a.id, { task: 'hijack' })).toBeUndefined();
        expect((await other.automations.get(org.id, a.id))?.task).toBe('Do the thing');
        const cleared = await storage.automations.update(org.id, a.id, { failing_step: undefined });
        expect(cleared?.failing_step).toBeUndefined();
        expect((await other.automations.list(org.id)).map((x) => x.name)).toEqual(['invoice']);
      });

      it('listMcpTools: published and failing automations with a live digest and mcp_enabled, oldest first, one org only', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const digest = `sha256:${'b'.repeat(64)}`;
        const rows = [
          automation(org.id, 'draft-one', { created_at: at(1) }),
          automation(org.id, 'live-two', { created_at: at(2), status: 'published', live_digest: digest, task: 'Two' }),
          automation(org.id, 'failing-three', { created_at: at(3), status: 'failing', live_digest: digest, failing_step: 'click_1' }),
          automation(org.id, 'hidden-four', { created_at: at(4), status: 'published', live_digest: digest, mcp_enabled: false }),
          automation(org.id, 'live-one', { created_at: at(1), status: 'published', live_digest: digest }),
          automation(orgB.id, 'other-org', { created_at: at(1), status: 'published', live_digest: digest }),
        ];
        for (const r of rows) await storage.automations.create(r);
        const listed = await (await independent()).automations.listMcpTools(org.id);
        expect(listed.map((r) => r.name)).toEqual(['live-one', 'live-two', 'failing-three']);
        expect(listed[1]).toEqual({ id: rows[1]!.id, name: 'live-two', task: 'Two', live_digest: digest });
        await storage.automations.update(org.id, rows[1]!.id, { mcp_enabled: false });
        await storage.automations.update(org.id, rows[0]!.id, { status: 'published', live_digest: digest });
        expect((await storage.automations.listMcpTools(org.id)).map((r) => r.name)).toEqual(['draft-one', 'live-one', 'failing-three']);
        expect((await storage.automations.listMcpTools(orgB.id)).map((r) => r.name)).toEqual(['other-org']);
      });

      it('mcpToolsFingerprint: equal exactly when listMcpTools is equal; each change of what a tool is made of changes it', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const digest = `sha256:${'c'.repeat(64)}`;
        const other = `sha256:${'d'.repeat(64)}`;
        const fp = async () => (await independent()).automations.mcpToolsFingerprint(org.id);
        const empty = await fp();
        expect(typeof empty).toBe('string');
        expect(await storage.automations.mcpToolsFingerprint(orgB.id)).toBe(empty);
        const a = automation(org.id, 'alpha', { created_at: at(1), status: 'published', live_digest: digest, task: 'A' });
        const b = automation(org.id, 'beta', { created_at: at(2), status: 'draft' });
        await storage.automations.create(a);
        await storage.automations.create(b);
        const seen = new Set([empty]);
        const changed = async (why: string) => {
          const now = await fp();
          expect(seen.has(now), why).toBe(false);
          seen.add(now);
          expect(await fp(), `${why}: stable while nothing changes`).toBe(now);
          return now;
        };
        const one = await changed('a published tool');
        await storage.automations.create(automation(orgB.id, 'gamma', { created_at: at(1), status: 'published', live_digest: digest }));
        expect(await fp(), 'another org changes nothing here').toBe(one);
        await storage.automations.update(org.id, b.id, { task: 'still a draft' });
        expect(await fp(), 'a draft is not a tool').toBe(one);
        await storage.automations.update(org.id, a.id, { task: 'A, reworded' });
        await changed('task');
        await storage.automations.update(org.id, a.id, { live_digest: other });
        const moved = await changed('live digest');
        await storage.automations.update(org.id, a.id, { mcp_enabled: false });
        expect(await fp(), 'mcp_enabled off: the list is empty again, and so is the fingerprint').toBe(empty);
        await storage.automations.update(org.id, a.id, { mcp_enabled: true });
        expect(await fp(), 'back on: the same list as before, the same fingerprint').toBe(moved);
        // Text that would concatenate alike still differs (fields are length-prefixed).
        await storage.automations.update(org.id, a.id, { task: 'A;B' });
        const joined = await fp();
        await storage.automations.update(org.id, a.id, { task: 'A' });
        await storage.automations.update(org.id, b.id, { status: 'published', live_digest: digest, task: 'B' });
        expect(await fp()).not.toBe(joined);
      });

      it('at most one starter example per org, also under concurrent creation', async () => {
        const { org } = await seedOrg(1);
        const other = await independent();
        const results = await Promise.allSettled([
          storage.automations.create(automation(org.id, 'example-a', { example: true })),
          other.automations.create(automation(org.id, 'example-b', { example: true })),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((await storage.automations.getExample(org.id))?.example).toBe(true);
      });

      it('authoring sessions: JSON fields round-trip, files by name, per org', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const a = automation(org.id, 'authored');
        await storage.automations.create(a);
        const session = {
          automation_id: a.id,
          org_id: org.id,
          captured_ops: [{ kind: 'fill', target: { label: 'Ünï "q"' }, value: 'line\nbreak' }],
          input_params: [{ name: 'q', required: false, sample: 'x' }],
          input_slots: ['q'],
          secret_slots: ['pw'],
          files: [],
          updated_at: at(4),
          state: 'editing' as const,
        };
        await storage.authoring.create(session);
        const other = await independent();
        expect(await other.authoring.get(org.id, a.id)).toEqual(session);
        expect(await other.authoring.get(orgB.id, a.id)).toBeUndefined();
        const next = await storage.authoring.update(org.id, a.id, { state: 'published', error: 'boom', updated_at: at(5) });
        expect(next).toMatchObject({ state: 'published', error: 'boom' });
        expect((await storage.authoring.update(org.id, a.id, { error: null }))?.error).toBeUndefined();
        const bytes = new Uint8Array([0, 1, 2, 255]);
        await storage.authoring.putFile(org.id, a.id, { name: 'f.bin', digest: 'sha256:x', bytes });
        expect(await other.authoring.getFile(org.id, a.id, 'f.bin')).toEqual({ digest: 'sha256:x', bytes });
        expect(await other.authoring.getFile(orgB.id, a.id, 'f.bin')).toBeUndefined();
        // A name reused for other bytes: the capture sees the new file, the old stays readable by digest, for this org only.
        const newer = new Uint8Array([9, 9]);
        await storage.authoring.putFile(org.id, a.id, { name: 'f.bin', digest: 'sha256:y', bytes: newer });
        expect(await other.authoring.getFile(org.id, a.id, 'f.bin')).toEqual({ digest: 'sha256:y', bytes: newer });
        expect(await other.authoring.fileByDigest(org.id, 'sha256:x')).toEqual(bytes);
        expect(await other.authoring.fileByDigest(org.id, 'sha256:y')).toEqual(newer);
        expect(await other.authoring.fileByDigest(orgB.id, 'sha256:x')).toBeUndefined();
        expect(await other.authoring.fileByDigest(org.id, 'sha256:z')).toBeUndefined();
      });

      it('versions: newest first, a republished digest keeps its first row, per org', async () => {
        const { org } = await seedOrg(1);
        const a = automation(org.id, 'versioned');
        await storage.automations.create(a);
        const d1 = `sha256:${'1'.repeat(64)}`;
        const d2 = `sha256:${'2'.repeat(64)}`;
        await storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d1, created_at: at(1), created_by: 'u' });
        await storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d2, created_at: at(2), created_by: 'u' });
        await storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d1, created_at: at(3), created_by: 'v' });
        const other = await independent();
        expect((await other.versions.list(org.id, a.id)).map((v) => [v.flow_digest, v.created_by])).toEqual([
          [d2, 'u'],
          [d1, 'u'],
        ]);
        expect(await other.versions.get(org.id, a.id, d2)).toMatchObject({ flow_digest: d2 });
        expect(await other.versions.get('other-org', a.id, d2)).toBeUndefined();
      });

      it('secrets: put replaces, list sorted by name, delete, per org', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        await storage.secrets.put({ org_id: org.id, name: 'b', ciphertext: 'v1.x.1', updated_at: at(1) });
        await storage.secrets.put({ org_id: org.id, name: 'a', ciphertext: 'v1.x.2', updated_at: at(2) });
        await storage.secrets.put({ org_id: org.id, name: 'b', ciphertext: 'v1.x.3', updated_at: at(3) });
        const other = await independent();
        expect((await other.secrets.list(org.id)).map((x) => [x.name, x.ciphertext])).toEqual([
          ['a', 'v1.x.2'],
          ['b', 'v1.x.3'],
        ]);
        expect(await other.secrets.get(orgB.id, 'a')).toBeUndefined();
        expect(await storage.secrets.delete(orgB.id, 'a')).toBe(false);
        expect(await storage.secrets.delete(org.id, 'a')).toBe(true);
        expect((await other.secrets.list(org.id)).map((x) => x.name)).toEqual(['b']);
      });
    });

    describe('executions', () => {
      const execution = (orgId: string, n: number, over: Record<string, unknown> = {}) => ({
        id: uid('exec'),
        org_id: orgId,
        automation_id: 'auto-1',
        flow: 'invoice',
        run_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        flow_digest: `sha256:${'e'.repeat(64)}`,
        dispatch: 'sync' as const,
        status: 'running' as const,
        created_at: at(n),
        ...over,
      });

      it('lists newest first with a cursor and a flow filter; one by id or run id; per org', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const rows = [1, 2, 3, 4].map((n) => execution(org.id, n, n === 3 ? { flow: 'refund', automation_id: 'auto-2' } : {}));
        for (const r of rows) await storage.executions.create(r);
        await storage.executions.create(execution(orgB.id, 9));
        const other = await independent();
        const page1 = await other.executions.list(org.id, { limit: 2 });
        expect(page1.map((e) => e.created_at)).toEqual([at(4), at(3)]);
        const page2 = await other.executions.list(org.id, { limit: 2, before: { created_at: page1[1]!.created_at, id: page1[1]!.id } });
        expect(page2.map((e) => e.created_at)).toEqual([at(2), at(1)]);
        expect((await other.executions.list(org.id, { limit: 10, flow: 'refund' })).map((e) => e.flow)).toEqual(['refund']);
        expect(await other.executions.get(org.id, rows[0]!.id)).toEqual(rows[0]);
        expect(await other.executions.getByRunId(org.id, rows[1]!.run_id)).toEqual(rows[1]);
        expect(await other.executions.getByRunId(orgB.id, rows[1]!.run_id)).toBeUndefined();
        await storage.executions.update(org.id, rows[0]!.id, { status: 'failed', finished_at: at(5), error_code: 'locator_drift' });
        await storage.executions.update(orgB.id, rows[1]!.id, { status: 'canceled' });
        expect(await other.executions.get(org.id, rows[0]!.id)).toMatchObject({ status: 'failed', finished_at: at(5), error_code: 'locator_drift' });
        expect((await other.executions.get(org.id, rows[1]!.id))?.status).toBe('running');
        const usage = await other.executions.usage(org.id, at(2));
        expect(usage.get('auto-1')).toEqual({ calls: 2, last_run_at: at(4) });
        expect(usage.get('auto-2')).toEqual({ calls: 1, last_run_at: at(3) });
      });
      it('finish records the terminal outcome once: true for the call that ends it, false after, never across orgs', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const row = execution(org.id, 7);
        await storage.executions.create(row);
        expect(await storage.executions.finish(orgB.id, row.id, { status: 'succeeded' })).toBe(false);
        expect(await storage.executions.finish(org.id, row.id, { status: 'canceled', finished_at: at(8) })).toBe(true);
        expect(await storage.executions.finish(org.id, row.id, { status: 'failed', finished_at: at(9), error_code: 'worker_lost' })).toBe(false);
        const other = await independent();
        expect(await other.executions.get(org.id, row.id)).toMatchObject({ status: 'canceled', finished_at: at(8) });
        expect((await other.executions.get(org.id, row.id))?.error_code).toBeUndefined();
        expect(await storage.executions.finish(org.id, 'no-such-row', { status: 'failed' })).toBe(false);
      });
      it('listUnfinished: queued and running rows of every org created before a time, oldest first, paged', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const rows = [
          execution(org.id, 1, { status: 'queued', dispatch: 'queue' }),
          execution(orgB.id, 2),
          execution(org.id, 3, { status: 'succeeded', finished_at: at(4) }),
          execution(orgB.id, 4, { status: 'queued', dispatch: 'queue' }),
          execution(org.id, 5),
          execution(org.id, 9),
        ];
        for (const r of rows) await storage.executions.create(r);
        await storage.executions.finish(org.id, rows[4]!.id, { status: 'failed', error_code: 'worker_lost' });
        const other = await independent();
        const all = await other.executions.listUnfinished({ createdBefore: at(9), limit: 10 });
        expect(all.map((e) => [e.created_at, e.status])).toEqual([
          [at(1), 'queued'],
          [at(2), 'running'],
          [at(4), 'queued'],
        ]);
        expect(all[0]).toEqual(rows[0]);
        const page1 = await other.executions.listUnfinished({ createdBefore: at(9), limit: 2 });
        const page2 = await other.executions.listUnfinished({ createdBefore: at(9), limit: 2, after: { created_at: page1[1]!.created_at, id: page1[1]!.id } });
        expect([...page1, ...page2].map((e) => e.id)).toEqual(all.map((e) => e.id));
        expect(await other.executions.listUnfinished({ createdBefore: at(1), limit: 10 })).toEqual([]);
      });
    });

    describe('webhooks and deliveries', () => {
      const hook = (orgId: string, n: number) => ({
        id: uid('wh'),
        org_id: orgId,
        url: 'https://hooks.example.test/in?x=1',
        events: ['run.finished' as const, 'run.failed' as const],
        description: 'Ünïcode 🚀',
        enabled: true,
        secret_ciphertext: 'v1.sealed',
        created_at: at(n),
        updated_at: at(n),
      });

      it('creates, reads, lists, changes and deletes endpoints and their deliveries within the org only', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const w1 = hook(org.id, 2);
        const w2 = hook(org.id, 3);
        await storage.webhooks.create(w1);
        await storage.webhooks.create(w2);
        const other = await independent();
        expect(await other.webhooks.get(org.id, w1.id)).toEqual(w1);
        expect(await other.webhooks.get(orgB.id, w1.id)).toBeUndefined();
        expect((await other.webhooks.list(org.id)).map((w) => w.id)).toEqual([w1.id, w2.id]);
        expect(await other.webhooks.list(orgB.id)).toEqual([]);
        expect(await storage.webhooks.update(orgB.id, w1.id, { enabled: false })).toBeUndefined();
        expect(
          await storage.webhooks.update(org.id, w1.id, {
            enabled: false,
            disabled_reason: 'the endpoint answered 410 Gone',
            events: ['automation.failing'],
            updated_at: at(4),
          }),
        ).toEqual({
          ...w1,
          enabled: false,
          disabled_reason: 'the endpoint answered 410 Gone',
          events: ['automation.failing'],
          updated_at: at(4),
        });
        expect((await storage.webhooks.update(org.id, w1.id, { enabled: true, disabled_reason: undefined }))?.disabled_reason).toBeUndefined();
        const d = (n: number) => ({
          id: uid('msg'),
          org_id: org.id,
          webhook_id: w2.id,
          event: 'run.finished' as const,
          payload: JSON.stringify({ type: 'run.finished', data: { text: 'münchen' } }),
          status: 'pending' as const,
          attempts: [],
          next_attempt_at: at(n),
          created_at: at(n),
          updated_at: at(n),
        });
        const d1 = d(5);
        const d2 = d(6);
        await storage.webhooks.createDelivery(d1);
        await storage.webhooks.createDelivery(d2);
        expect(await other.webhooks.getDelivery(org.id, d1.id)).toEqual(d1);
        expect(await other.webhooks.getDelivery(orgB.id, d1.id)).toBeUndefined();
        const attempts = [{ at: at(7), status: 500, error: 'HTTP 500', duration_ms: 12 }];
        await storage.webhooks.updateDelivery(orgB.id, d1.id, { status: 'failed' });
        await storage.webhooks.updateDelivery(org.id, d1.id, { status: 'delivered', attempts, next_attempt_at: undefined, updated_at: at(8) });
        expect(await other.webhooks.getDelivery(org.id, d1.id)).toEqual({
          ...d1,
          status: 'delivered',
          attempts,
          next_attempt_at: undefined,
          updated_at: at(8),
        } as never);
        expect((await other.webhooks.deliveries(org.id, w2.id, 10)).map((x) => x.id)).toEqual([d2.id, d1.id]);
        expect(await other.webhooks.deliveries(orgB.id, w2.id, 10)).toEqual([]);
        expect(await storage.webhooks.delete(orgB.id, w2.id)).toBe(false);
        expect(await storage.webhooks.delete(org.id, w2.id)).toBe(true);
        expect(await other.webhooks.getDelivery(org.id, d1.id)).toBeUndefined();
      });
    });

    describe('schedules and fire claims', () => {
      const seedAutomation = async (orgId: string) => {
        const a = {
          id: uid('auto'),
          org_id: orgId,
          name: uid('flow').toLowerCase(),
          task: '',
          site: 'https://x.test',
          mcp_enabled: true,
          created_at: at(1),
          status: 'published' as const,
          live_digest: `sha256:${'a'.repeat(64)}`,
          needs_attention: false,
          example: false,
          params: [],
        };
        await storage.automations.create(a);
        return a;
      };
      const schedule = (orgId: string, automationId: string, n: number, enabled = true) => ({
        id: uid('sched'),
        org_id: orgId,
        automation_id: automationId,
        cron: '*/5 * * * *',
        flow_digest: `sha256:${'b'.repeat(64)}`,
        inputs: { who: 'Ada', nested: { list: [1, 'two'] } },
        enabled,
        created_at: at(n),
        created_by: 'user-1',
        updated_at: at(n),
        since: at(n),
      });

      it('creates, reads, lists, changes and deletes within the org only', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const a = await seedAutomation(org.id);
        const s1 = { ...schedule(org.id, a.id, 2), timezone: 'Europe/Berlin' };
        const s2 = schedule(org.id, a.id, 3, false);
        await storage.schedules.create(s1);
        await storage.schedules.create(s2);
        const other = await independent();
        expect(await other.schedules.get(org.id, s1.id)).toEqual(s1);
        expect(await other.schedules.get(orgB.id, s1.id)).toBeUndefined();
        expect((await other.schedules.list(org.id, a.id)).map((s) => s.id)).toEqual([s1.id, s2.id]);
        expect(await other.schedules.list(orgB.id, a.id)).toEqual([]);
        expect(await storage.schedules.update(orgB.id, s1.id, { enabled: false })).toBeUndefined();
        const changed = await storage.schedules.update(org.id, s1.id, {
          cron: '0 7 * * *',
          timezone: undefined,
          inputs: { who: 'Grace' },
          enabled: false,
          updated_at: at(4),
          since: at(4),
        });
        expect(changed).toEqual({
          ...s1,
          cron: '0 7 * * *',
          timezone: undefined,
          inputs: { who: 'Grace' },
          enabled: false,
          updated_at: at(4),
          since: at(4),
        } as never);
        expect((await other.schedules.get(org.id, s1.id))?.timezone).toBeUndefined();
        expect(await storage.schedules.delete(orgB.id, s2.id)).toBe(false);
        expect(await storage.schedules.delete(org.id, s2.id)).toBe(true);
        expect(await other.schedules.get(org.id, s2.id)).toBeUndefined();
      });

      it('listEnabled reads the enabled schedules of every org, oldest first', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const a = await seedAutomation(org.id);
        const b = await seedAutomation(orgB.id);
        const on1 = schedule(org.id, a.id, 5);
        const off = schedule(org.id, a.id, 6, false);
        const on2 = schedule(orgB.id, b.id, 7);
        for (const s of [on2, off, on1]) await storage.schedules.create(s);
        const ids = (await (await independent()).schedules.listEnabled(10_000)).map((s) => s.id);
        expect(ids.filter((id) => [on1.id, off.id, on2.id].includes(id))).toEqual([on1.id, on2.id]);
      });

      it('a fire is claimed once across connections (unique per schedule and fire time), never for another org or a deleted schedule', async () => {
        const { org } = await seedOrg(1);
        const { org: orgB } = await seedOrg(1);
        const a = await seedAutomation(org.id);
        const s = schedule(org.id, a.id, 1);
        await storage.schedules.create(s);
        const other = await independent();
        const claim = (by: string, st: ServiceStorage, fireAt = at(30)) =>
          st.schedules.claimFire({ schedule_id: s.id, org_id: org.id, fire_at: fireAt, claimed_at: at(31), claimed_by: by });
        const results = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => claim(`p${i}`, i % 2 === 0 ? storage : other)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await claim('late', other)).toBe(false);
        expect(await storage.schedules.claimFire({ schedule_id: s.id, org_id: orgB.id, fire_at: at(40), claimed_at: at(40), claimed_by: 'x' })).toBe(false);
        expect(await claim('next', storage, at(35))).toBe(true);
        await storage.schedules.completeFire(org.id, s.id, at(30), { execution_id: 'exec-1' });
        await storage.schedules.completeFire(org.id, s.id, at(35), { error: 'not_found: gone' });
        await storage.schedules.completeFire(orgB.id, s.id, at(35), { execution_id: 'stranger' });
        const fires = await other.schedules.fires(org.id, s.id, 10);
        expect(fires.map((f) => [f.fire_at, f.execution_id, f.error])).toEqual([
          [at(35), undefined, 'not_found: gone'],
          [at(30), 'exec-1', undefined],
        ]);
        expect(fires[1]!.claimed_by).toBe(`p${results.indexOf(true)}`);
        expect(await other.schedules.fires(orgB.id, s.id, 10)).toEqual([]);
        await storage.schedules.delete(org.id, s.id);
        expect(await other.schedules.fires(org.id, s.id, 10)).toEqual([]);
        expect(await claim('after-delete', storage, at(50))).toBe(false);
      });
    });

    describe('transactions', () => {
      it('commits every write of fn together', async () => {
        const org = { id: uid('org'), name: 'Tx', created_at: at(1) };
        const user = { id: uid('user'), email: `${uid('t')}@example.test`, password_hash: 'h', created_at: at(1) };
        await storage.transaction(async (tx) => {
          await tx.users.create(user);
          await tx.orgs.create(org);
          await tx.members.add({ org_id: org.id, user_id: user.id, role: 'owner', created_at: at(1) });
          await appendAuditEntry(tx.audit, {
            id: uid('aud'),
            org_id: org.id,
            actor: user.id,
            target: `org:${org.id}`,
            at: at(1),
            metadata: { action: 'org.create' },
          });
        });
        const other = await independent();
        expect(await other.users.get(user.id)).toEqual(user);
        expect((await other.members.list(org.id)).map((m) => m.role)).toEqual(['owner']);
        expect(await other.audit.all(org.id)).toHaveLength(1);
      });

      it('rolls back every write when fn throws, and rethrows its error', async () => {
        const org = { id: uid('org'), name: 'Rollback', created_at: at(1) };
        const user = { id: uid('user'), email: `${uid('r')}@example.test`, password_hash: 'h', created_at: at(1) };
        const boom = new Error('boom');
        await expect(
          storage.transaction(async (tx) => {
            await tx.users.create(user);
            await tx.orgs.create(org);
            await appendAuditEntry(tx.audit, { id: uid('aud'), org_id: org.id, actor: user.id, target: 't', at: at(1), metadata: { action: 'x' } });
            throw boom;
          }),
        ).rejects.toBe(boom);
        const other = await independent();
        expect(await other.users.get(user.id)).toBeUndefined();
        expect(await other.orgs.get(org.id)).toBeUndefined();
        expect(await other.audit.all(org.id)).toEqual([]);
        // The storage is still usable after a rollback.
        await storage.users.create(user);
        expect(await other.users.get(user.id)).toEqual(user);
      });

      it('a conflict inside a transaction rolls back its earlier writes', async () => {
        const taken = { id: uid('user'), email: `${uid('c')}@example.test`, password_hash: 'h', created_at: at(1) };
        await storage.users.create(taken);
        const org = { id: uid('org'), name: 'Half', created_at: at(1) };
        await rejectsWith(
          storage.transaction(async (tx) => {
            await tx.orgs.create(org);
            await tx.users.create({ ...taken, id: uid('user') });
          }),
          'conflict',
        );
        expect(await (await independent()).orgs.get(org.id)).toBeUndefined();
      });

      it.runIf(options.concurrentTransactions)('an uncommitted write is invisible to other connections until commit', async () => {
        const user = { id: uid('user'), email: `${uid('i')}@example.test`, password_hash: 'h', created_at: at(1) };
        const other = await independent();
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let written!: () => void;
        const wrote = new Promise<void>((r) => (written = r));
        const tx = storage.transaction(async (t) => {
          await t.users.create(user);
          written();
          await gate;
        });
        await wrote;
        expect(await other.users.get(user.id)).toBeUndefined();
        release();
        await tx;
        expect(await other.users.get(user.id)).toEqual(user);
      });
    });
  });
}
