// The hosted service's audit log: the core seals each entry (src/audit/chain.ts), the store appends it at an expected seq.

export interface AuditRecord {
  id: string;
  org_id: string;
  /** Position in the org's chain, from 0. */
  seq: number;
  /** User id (or `key:<id>`, `system`) who acted. */
  actor: string;
  /** What was acted on (`key:<id>`, `member:<user id>`, `org:<id>`, ...). */
  target: string;
  at: string;
  /** `action` names what happened (`key.mint`, `member.add`, ...); the rest is detail. Never a secret. */
  metadata: Record<string, unknown>;
  /** Digest of the previous entry of the org (`sha256:` of its canonical JSON), or null for the first. */
  prev: string | null;
  /** Digest of this entry's canonical JSON (all fields above but `digest`). */
  digest: string;
}

export interface AuditPage {
  entries: AuditRecord[];
  /** Seq to pass as `beforeSeq` for the next (older) page, or undefined on the last page. */
  nextBeforeSeq?: number;
}

/** An org's newest audit entry: the next entry goes at `seq + 1` and chains to `digest`. */
export interface AuditHead {
  seq: number;
  digest: string;
}

/**
 * The audit log's storage. The chain itself is the core's (src/audit/chain.ts), as the journal's
 * is: the core reads the head, seals the next entry (seq, prev, digest) and appends it at the
 * position it sealed it for; the store only keeps the chain from forking.
 */
export interface AuditStore {
  /** The org's newest entry (its seq and digest), or undefined when the org has none. */
  head(orgId: string): Promise<AuditHead | undefined>;
  /**
   * Store a sealed entry as entry `expectedSeq` of its org's chain (`entry.seq` must equal it): only
   * when the chain has exactly `expectedSeq` entries, atomically with respect to other appends of the
   * org. Otherwise FlowError `audit_conflict` (`data`: `org_id`, `seq`, `length`): another writer
   * appended first, and the caller seals against the new head and tries again (`appendAuditEntry`).
   * Never two entries at one seq, never a gap.
   */
  append(entry: AuditRecord, expectedSeq: number): Promise<void>;
  /** Newest first, at most `limit`, only entries with seq < beforeSeq when given. */
  page(orgId: string, options: { limit: number; beforeSeq?: number }): Promise<AuditPage>;
  /** Every entry of the org, oldest first (for verifying the chain). */
  all(orgId: string): Promise<AuditRecord[]>;
}
