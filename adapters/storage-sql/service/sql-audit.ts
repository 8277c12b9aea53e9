import { FlowError, prefixed } from '../../../src/errors.js';
import type { AuditRecord, AuditStore } from '../../../src/ports/service-storage.js';
import { constraintOf, errorCode } from '../sql-errors.js';
import { isoTextNotNull, jsonb, jsonTextNotNull, parseJson, timestamptz } from '../sql-values.js';
import { COMPONENT, inTx, lockOrg, type ServiceContext } from './service-context.js';

interface AuditRow {
  id: string;
  org_id: string;
  seq: number;
  actor: string;
  target: string;
  at: string;
  metadata: string;
  prev: string | null;
  digest: string;
}

const toAudit = (r: AuditRow): AuditRecord => ({
  id: r.id,
  org_id: r.org_id,
  seq: Number(r.seq),
  actor: r.actor,
  target: r.target,
  at: r.at,
  metadata: parseJson(r.metadata) as Record<string, unknown>,
  prev: r.prev,
  digest: r.digest,
});

function auditConflict(orgId: string, seq: number, length: number | undefined): FlowError {
  const where = length === undefined ? 'another writer appended it first' : `the chain has ${length} entries`;
  return new FlowError('audit_conflict', prefixed(COMPONENT, `audit chain of org ${orgId}: cannot append seq ${seq}: ${where}`), {
    data: { org_id: orgId, seq, length },
  });
}

/**
 * The audit log (migration 0001_accounts). Entries come sealed by the core (src/audit/chain.ts);
 * `append` stores one only at its org's current length. It locks the org's row first, so appends of
 * one org queue behind each other (and behind the org's last-owner writes, which lock it too: one
 * lock order) and each sees the length its predecessor committed; the unique (org_id, seq) backs it.
 */
export function sqlAuditStore(ctx: ServiceContext): AuditStore {
  const audits = () =>
    ctx.db
      .selectFrom('svc_audit')
      .select(['id', 'org_id', 'seq', 'actor', 'target', isoTextNotNull('at', 'at'), jsonTextNotNull('metadata', 'metadata'), 'prev', 'digest']);
  return {
    head: (orgId) =>
      ctx.guard('audit.head', async () => {
        const row = await ctx.db
          .selectFrom('svc_audit')
          .select(['seq', 'digest'])
          .where('org_id', '=', orgId)
          .orderBy('seq', 'desc')
          .limit(1)
          .executeTakeFirst();
        return row ? { seq: Number(row.seq), digest: row.digest } : undefined;
      }),
    append: (entry, expectedSeq) =>
      ctx.guard('audit.append', async () => {
        if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0 || entry.seq !== expectedSeq) {
          const why = `audit entry seq ${entry.seq} must be the expected seq ${expectedSeq}, a non-negative integer`;
          throw new FlowError('invalid_record', prefixed(COMPONENT, why));
        }
        const length = await inTx(ctx, async (tx) => {
          await lockOrg(tx, entry.org_id);
          const last = await tx.selectFrom('svc_audit').select('seq').where('org_id', '=', entry.org_id).orderBy('seq', 'desc').limit(1).executeTakeFirst();
          const length = last ? Number(last.seq) + 1 : 0;
          if (length !== expectedSeq) return length;
          try {
            await tx
              .insertInto('svc_audit')
              .values({
                id: entry.id,
                org_id: entry.org_id,
                seq: entry.seq,
                actor: entry.actor,
                target: entry.target,
                at: timestamptz('at', entry.at),
                metadata: jsonb(entry.metadata),
                prev: entry.prev,
                digest: entry.digest,
              })
              .execute();
          } catch (err) {
            // Only a writer that did not take the org's lock can get here first.
            if (errorCode(err) === '23505' && constraintOf(err) === 'svc_audit_org_seq') throw auditConflict(entry.org_id, entry.seq, undefined);
            throw err;
          }
          return undefined;
        });
        if (length !== undefined) throw auditConflict(entry.org_id, entry.seq, length);
      }),
    page: (orgId, { limit, beforeSeq }) =>
      ctx.guard('audit.page', async () => {
        let q = audits().where('org_id', '=', orgId);
        if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
        const rows = await q
          .orderBy('seq', 'desc')
          .limit(limit + 1)
          .execute();
        const entries = rows.slice(0, limit).map(toAudit);
        return rows.length > limit ? { entries, nextBeforeSeq: entries[entries.length - 1]!.seq } : { entries };
      }),
    all: (orgId) =>
      ctx.guard('audit.all', async () => {
        const rows = await audits().where('org_id', '=', orgId).orderBy('seq').execute();
        return rows.map(toAudit);
      }),
  };
}
