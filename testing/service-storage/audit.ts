import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../src/errors.js';
import { appendAuditEntry, sealAuditEntry, verifyAuditChain, type AuditDraft } from '../../src/audit/chain.js';
import { rejectsWith, uid, at, type Suite } from './shared.js';

/** The audit chain: appends at the expected sequence only, one winner per sequence, concurrent appends, an unbroken chain. */
export function describeAudit(suite: Suite): void {
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
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      expect(await suite.storage.audit.head(org.id)).toBeUndefined();
      for (let i = 0; i < 5; i++) await appendAuditEntry(suite.storage.audit, draft(org.id, i));
      await appendAuditEntry(suite.storage.audit, draft(orgB.id, 1, { target: 'x', metadata: { action: 'org.create' } }));
      const other = await suite.independent();
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
      const { org } = await suite.seedOrg(1);
      const first = sealAuditEntry(draft(org.id, 0), undefined);
      await suite.storage.audit.append(first, 0);
      const other = await suite.independent();
      // A writer that sealed against the same (empty) head lost the race: refused, nothing stored.
      const stale = sealAuditEntry(draft(org.id, 1), undefined);
      const lost = await rejectsWith(other.audit.append(stale, 0), 'audit_conflict');
      expect((lost as { data: Record<string, unknown> }).data).toMatchObject({ org_id: org.id, seq: 0 });
      // A seq past the end would leave a gap: refused too.
      const head = { seq: 1, digest: first.digest };
      await rejectsWith(other.audit.append(sealAuditEntry(draft(org.id, 2), head), 2), 'audit_conflict');
      // The expected seq is the entry's own.
      await rejectsWith(other.audit.append(sealAuditEntry(draft(org.id, 3), { seq: 0, digest: first.digest }), 0), 'invalid_record');
      expect(await suite.storage.audit.all(org.id)).toEqual([first]);
      const second = sealAuditEntry(draft(org.id, 4), { seq: 0, digest: first.digest });
      await other.audit.append(second, 1);
      expect(await suite.storage.audit.all(org.id)).toEqual([first, second]);
      expect(verifyAuditChain(org.id, [first, second]).ok).toBe(true);
    });

    it('of concurrent appends at one seq, exactly one goes in', async () => {
      const { org } = await suite.seedOrg(1);
      const other = await suite.independent();
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? other : suite.storage).audit.append(sealAuditEntry(draft(org.id, i), undefined), 0)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(isFlowError(r.reason, 'audit_conflict'), String(r.reason)).toBe(true);
      expect(await suite.storage.audit.all(org.id)).toHaveLength(1);
    });

    it('concurrent appends of one org, from two connections, never fork the chain', async () => {
      const { org } = await suite.seedOrg(1);
      const other = await suite.independent();
      const stored = await Promise.all(Array.from({ length: 12 }, (_, i) => appendAuditEntry((i % 2 ? other : suite.storage).audit, draft(org.id, i))));
      const all = await suite.storage.audit.all(org.id);
      expect(all).toHaveLength(12);
      expect(verifyAuditChain(org.id, all)).toEqual({ ok: true, entries: 12 });
      expect(new Set(all.map((e) => e.id))).toEqual(new Set(stored.map((e) => e.id)));
    });

    it('concurrent transactions that each write and append an audit entry commit one unbroken chain', async () => {
      const { org } = await suite.seedOrg(1);
      // Two connections at once where transactions can run at once (Postgres); one otherwise.
      const writers = suite.options.concurrentTransactions ? [suite.storage, await suite.independent()] : [suite.storage];
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          writers[i % writers.length]!.transaction(async (tx) => {
            await tx.secrets.put({ org_id: org.id, name: `S${i}`, ciphertext: `c${i}`, updated_at: at(i) });
            await appendAuditEntry(tx.audit, draft(org.id, i, { target: `secret:S${i}`, metadata: { action: 'secret.create' } }));
          }),
        ),
      );
      const all = await (await suite.independent()).audit.all(org.id);
      expect(verifyAuditChain(org.id, all)).toEqual({ ok: true, entries: 8 });
      expect(new Set(all.map((e) => e.target))).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `secret:S${i}`)));
    });
  });
}
