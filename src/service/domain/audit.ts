import { appendAuditEntry } from '../../audit/chain.js';
import type { ServiceStores } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';

/**
 * Write an audit entry (in the caller's transaction when `tx` is one), sealed here and chained to
 * the org's newest entry (src/audit/chain.ts). Never a secret in metadata.
 */
export function audit(
  deps: ServiceDeps,
  tx: ServiceStores,
  entry: { org_id: string; actor: string; target: string; action: string; detail?: Record<string, unknown> },
): Promise<unknown> {
  return appendAuditEntry(tx.audit, {
    id: deps.ids.uuid(),
    org_id: entry.org_id,
    actor: entry.actor,
    target: entry.target,
    at: deps.clock.now(),
    metadata: { action: entry.action, ...(entry.detail ?? {}) },
  });
}
