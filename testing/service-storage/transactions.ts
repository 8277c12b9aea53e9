import { describe, expect, it } from 'vitest';
import { appendAuditEntry } from '../../src/audit/chain.js';
import { within } from '../bounded.js';
import { rejectsWith, uid, at, type Suite } from './shared.js';

/** Transactions: commit, rollback, isolation between connections. */
export function describeTransactions(suite: Suite): void {
  describe('transactions', () => {
    it('commits every write of fn together', async () => {
      const org = { id: uid('org'), name: 'Tx', created_at: at(1) };
      const user = { id: uid('user'), email: `${uid('t')}@example.test`, password_hash: 'h', created_at: at(1) };
      await suite.storage.transaction(async (tx) => {
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
      const other = await suite.independent();
      expect(await other.users.get(user.id)).toEqual(user);
      expect((await other.members.list(org.id)).map((m) => m.role)).toEqual(['owner']);
      expect(await other.audit.all(org.id)).toHaveLength(1);
    });

    it('rolls back every write when fn throws, and rethrows its error', async () => {
      const org = { id: uid('org'), name: 'Rollback', created_at: at(1) };
      const user = { id: uid('user'), email: `${uid('r')}@example.test`, password_hash: 'h', created_at: at(1) };
      const boom = new Error('boom');
      await expect(
        suite.storage.transaction(async (tx) => {
          await tx.users.create(user);
          await tx.orgs.create(org);
          await appendAuditEntry(tx.audit, { id: uid('aud'), org_id: org.id, actor: user.id, target: 't', at: at(1), metadata: { action: 'x' } });
          throw boom;
        }),
      ).rejects.toBe(boom);
      const other = await suite.independent();
      expect(await other.users.get(user.id)).toBeUndefined();
      expect(await other.orgs.get(org.id)).toBeUndefined();
      expect(await other.audit.all(org.id)).toEqual([]);
      // The storage is still usable after a rollback.
      await suite.storage.users.create(user);
      expect(await other.users.get(user.id)).toEqual(user);
    });

    it('a conflict inside a transaction rolls back its earlier writes', async () => {
      const taken = { id: uid('user'), email: `${uid('c')}@example.test`, password_hash: 'h', created_at: at(1) };
      await suite.storage.users.create(taken);
      const org = { id: uid('org'), name: 'Half', created_at: at(1) };
      await rejectsWith(
        suite.storage.transaction(async (tx) => {
          await tx.orgs.create(org);
          await tx.users.create({ ...taken, id: uid('user') });
        }),
        'conflict',
      );
      expect(await (await suite.independent()).orgs.get(org.id)).toBeUndefined();
    });

    it.runIf(suite.options.concurrentTransactions)('an uncommitted write is invisible to other connections until commit', async () => {
      const user = { id: uid('user'), email: `${uid('i')}@example.test`, password_hash: 'h', created_at: at(1) };
      const other = await suite.independent();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const wrote = new Promise<void>((r) => (written = r));
      const tx = suite.storage.transaction(async (t) => {
        await t.users.create(user);
        written();
        await gate;
      });
      // The transaction's failure, if it fails before writing, rather than a wait for ever.
      await within(Promise.race([wrote, tx]), 'transaction() did not run its callback to the write');
      expect(await other.users.get(user.id)).toBeUndefined();
      release();
      await within(tx, 'transaction() did not commit once its callback resolved');
      expect(await other.users.get(user.id)).toEqual(user);
    });
  });
}
