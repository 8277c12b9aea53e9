import { describe, expect, it } from 'vitest';
import { appendAuditEntry, auditDigest, sealAuditEntry, verifyAuditChain, type AuditDraft } from '../../../src/audit/chain.js';
import { FlowError } from '../../../src/errors.js';
import type { AuditHead, AuditRecord, AuditStore } from '../../../src/ports/service-storage.js';

const draft = (i: number): AuditDraft => ({
  id: `a${i}`,
  org_id: 'org',
  actor: 'u',
  target: `key:${i}`,
  at: `2026-01-01T00:00:0${i}.000Z`,
  metadata: { action: 'key.mint', i },
});

/**
 * An audit store as the port describes it, in memory: `append` stores an entry only at the chain's
 * length. `before(n)`, when set, runs before the n-th append is checked (another writer getting in).
 */
function store(before?: (n: number, chain: AuditRecord[]) => void) {
  const chain: AuditRecord[] = [];
  let appends = 0;
  let heads = 0;
  const audit: Pick<AuditStore, 'head' | 'append'> = {
    head: async (): Promise<AuditHead | undefined> => {
      heads++;
      const last = chain[chain.length - 1];
      return last ? { seq: last.seq, digest: last.digest } : undefined;
    },
    append: async (entry, expectedSeq) => {
      before?.(++appends, chain);
      if (expectedSeq !== chain.length) throw new FlowError('audit_conflict', `seq ${expectedSeq}: the chain has ${chain.length} entries`);
      chain.push(entry);
    },
  };
  return { audit, chain, counts: () => ({ appends, heads }) };
}

describe('the audit chain, sealed in the core', () => {
  it('seals each entry against the head: seq, prev and the digest of everything else', () => {
    const first = sealAuditEntry(draft(0), undefined);
    expect(first).toMatchObject({ seq: 0, prev: null });
    expect(first.digest).toBe(auditDigest(first));
    const second = sealAuditEntry(draft(1), { seq: first.seq, digest: first.digest });
    expect(second).toMatchObject({ seq: 1, prev: first.digest });
    expect(verifyAuditChain('org', [first, second])).toEqual({ ok: true, entries: 2 });
    expect(verifyAuditChain('org', [second])).toMatchObject({ ok: false, broken: { seq: 1, reason: 'seq' } });
  });

  it('appendAuditEntry seals again against the new head after losing a race, so the chain never forks', async () => {
    // Before the first two appends of ours are checked, another writer appends.
    const s = store((n, chain) => {
      if (n <= 2) {
        const last = chain[chain.length - 1];
        chain.push(sealAuditEntry(draft(5 + n), last ? { seq: last.seq, digest: last.digest } : undefined));
      }
    });
    const stored = await appendAuditEntry(s.audit, draft(0));
    expect(stored).toMatchObject({ id: 'a0', seq: 2, prev: s.chain[1]!.digest });
    expect(s.chain.map((e) => e.id)).toEqual(['a6', 'a7', 'a0']);
    expect(verifyAuditChain('org', s.chain).ok).toBe(true);
    expect(s.counts()).toEqual({ appends: 3, heads: 3 });
  });

  it('gives up with audit_conflict after `attempts` lost races, and never retries another error', async () => {
    const losing = store((_n, chain) => {
      const last = chain[chain.length - 1];
      chain.push(sealAuditEntry(draft(9), last ? { seq: last.seq, digest: last.digest } : undefined));
    });
    await expect(appendAuditEntry(losing.audit, draft(0), 3)).rejects.toMatchObject({ code: 'audit_conflict' });
    expect(losing.counts().appends).toBe(3);

    const failing = store(() => {
      throw new FlowError('db_unreachable', 'down');
    });
    await expect(appendAuditEntry(failing.audit, draft(0))).rejects.toMatchObject({ code: 'db_unreachable' });
    expect(failing.counts().appends).toBe(1);
  });
});
