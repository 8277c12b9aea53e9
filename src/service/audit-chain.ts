import { digestOf } from '../canonical.js';
import type { AuditRecord } from '../ports/service-storage.js';

/**
 * The audit log of an org is a hash chain (docs/hosted-api.md, "Audit log"): entry n carries
 * `prev` = the digest of entry n-1 (null for n = 0), and `digest` = sha256 of the canonical JSON of
 * every field but `digest` itself. Changing, removing or reordering any stored entry breaks the chain
 * at that entry, which `verifyAuditChain` reports.
 */

export function auditDigest(entry: Omit<AuditRecord, 'digest'>): string {
  const { id, org_id, seq, actor, target, at, metadata, prev } = entry;
  return digestOf({ id, org_id, seq, actor, target, at, metadata, prev });
}

export interface AuditChainReport {
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** The first entry that does not verify, and why. */
  broken?: { seq: number; id: string; reason: 'digest' | 'prev' | 'seq' | 'org' };
}

/** Check an org's entries, oldest first, as `AuditStore.all` returns them. */
export function verifyAuditChain(orgId: string, entries: readonly AuditRecord[]): AuditChainReport {
  let prev: string | null = null;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const broken = (reason: NonNullable<AuditChainReport['broken']>['reason']): AuditChainReport => ({
      ok: false,
      entries: entries.length,
      broken: { seq: e.seq, id: e.id, reason },
    });
    if (e.org_id !== orgId) return broken('org');
    if (e.seq !== i) return broken('seq');
    if (e.prev !== prev) return broken('prev');
    if (auditDigest(e) !== e.digest) return broken('digest');
    prev = e.digest;
  }
  return { ok: true, entries: entries.length };
}
