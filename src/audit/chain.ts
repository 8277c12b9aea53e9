import { digestOf } from '../canonical.js';
import { isFlowError } from '../errors.js';
import type { AuditHead, AuditRecord, AuditStore } from '../ports/service-storage.js';

/**
 * The audit log of an org is a hash chain (docs/hosted-api.md, "Audit log"): entry n carries
 * `prev` = the digest of entry n-1 (null for n = 0), and `digest` = sha256 of the canonical JSON of
 * every field but `digest` itself. Changing, removing or reordering any stored entry breaks the chain
 * at that entry, which `verifyAuditChain` reports.
 *
 * The chain is sealed here, in the core, as the run journal's is (src/run/journal.ts): a storage
 * adapter stores sealed entries at the position they were sealed for and refuses any other
 * (`AuditStore.append`), so every adapter chains alike.
 */

/** An audit entry before sealing: everything but its place in the chain. */
export type AuditDraft = Omit<AuditRecord, 'seq' | 'prev' | 'digest'>;

/** An entry's digest: `sha256:` of the canonical JSON of its fields but `digest` (its place in the chain included). */
export function auditDigest(entry: Omit<AuditRecord, 'digest'>): string {
  const { id, org_id, seq, actor, target, at, metadata, prev } = entry;
  return digestOf({ id, org_id, seq, actor, target, at, metadata, prev });
}

/** The entry that follows `head` (undefined: the org's first), sealed: seq, prev and digest set. */
export function sealAuditEntry(draft: AuditDraft, head: AuditHead | undefined): AuditRecord {
  const { id, org_id, actor, target, at, metadata } = draft;
  const body = { id, org_id, seq: head ? head.seq + 1 : 0, actor, target, at, metadata, prev: head ? head.digest : null };
  return { ...body, digest: auditDigest(body) };
}

/**
 * How many times `appendAuditEntry` seals again after losing a race. Each `audit_conflict` means
 * another append of the org went in, so this bounds the wait behind that many concurrent appends.
 */
export const AUDIT_APPEND_ATTEMPTS = 100;

/**
 * Append `draft` at the end of its org's chain: read the head, seal against it, append at that
 * position; when another writer appended first (`audit_conflict`), read the new head and try again
 * (at most `attempts` times). In a transaction's stores, the entry commits with the transaction.
 * Returns the stored entry.
 */
export async function appendAuditEntry(store: Pick<AuditStore, 'head' | 'append'>, draft: AuditDraft, attempts = AUDIT_APPEND_ATTEMPTS): Promise<AuditRecord> {
  for (let attempt = 1; ; attempt++) {
    const sealed = sealAuditEntry(draft, await store.head(draft.org_id));
    try {
      await store.append(sealed, sealed.seq);
      return sealed;
    } catch (err) {
      if (!isFlowError(err, 'audit_conflict') || attempt >= attempts) throw err;
    }
  }
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
