import type { ExecutionRecord } from '../../ports/service-storage.js';
import type { Run } from '../../run/types.js';
import type { ServiceDeps } from '../context.js';
import { audit } from './audit.js';

/**
 * Status that follows the site (docs/hosted-api.md, "Drift"): a succeeded run of the live version
 * says what the site is like now.
 *
 * - No step needed a fallback locator (clean): a `failing` or degraded automation is `published`
 *   again with `needs_attention` false and no drifted step (audit `automation.recovered`).
 * - A step succeeded only through a fallback (its `step_succeeded` carries a `drift` warning): the
 *   automation is *degraded*: status `published`, `needs_attention` true, the step kept as the one to
 *   re-record (audit `automation.degraded`), until a clean run or a new publish.
 *
 * Runs of any other digest (an older version, a capture test of an edited capture) change nothing.
 * These changes are the service's own: audited with the actor `service` (SERVICE_ACTOR).
 */

/** The audit actor of what the service does by itself (not a user's action). */
export const SERVICE_ACTOR = 'service';

/** The first step of a run that succeeded only through a fallback locator, if any. */
export function fallbackStep(run: Run): string | undefined {
  for (const e of run.journal) {
    if (e.event === 'step_succeeded' && e.warnings?.some((w) => w.code === 'drift')) return e.step;
  }
  return undefined;
}

type Change = { status: 'published'; needs_attention: boolean; failing_step: string | undefined; action: 'automation.recovered' | 'automation.degraded' };

function changeOf(current: { status: string; needs_attention: boolean; failing_step?: string }, drifted: string | undefined): Change | undefined {
  if (current.status === 'draft') return undefined;
  if (drifted === undefined) {
    if (current.status === 'published' && !current.needs_attention) return undefined;
    return { status: 'published', needs_attention: false, failing_step: undefined, action: 'automation.recovered' };
  }
  if (current.status === 'published' && current.needs_attention && current.failing_step === drifted) return undefined;
  return { status: 'published', needs_attention: true, failing_step: drifted, action: 'automation.degraded' };
}

/** Apply a succeeded run of `execution` to its automation's status (nothing for other runs). */
export async function followSite(deps: ServiceDeps, execution: ExecutionRecord, run: Run): Promise<void> {
  if (run.status !== 'succeeded') return;
  const drifted = fallbackStep(run);
  // One read on the common path (published, nothing to change); the change itself re-reads in its
  // transaction, so a publish or rollback in between is never overwritten.
  const seen = await deps.storage.automations.get(execution.org_id, execution.automation_id);
  if (!seen || seen.live_digest !== execution.flow_digest || !changeOf(seen, drifted)) return;
  await deps.storage.transaction(async (tx) => {
    const current = await tx.automations.get(execution.org_id, execution.automation_id);
    if (!current || current.live_digest !== execution.flow_digest) return;
    const change = changeOf(current, drifted);
    if (!change) return;
    const from = current.status === 'failing' ? 'failing' : current.needs_attention ? 'degraded' : 'published';
    await tx.automations.update(execution.org_id, execution.automation_id, {
      status: change.status,
      needs_attention: change.needs_attention,
      failing_step: change.failing_step,
    });
    await audit(deps, tx, {
      org_id: execution.org_id,
      actor: SERVICE_ACTOR,
      target: `automation:${execution.automation_id}`,
      action: change.action,
      detail: {
        name: current.name,
        from,
        to: change.needs_attention ? 'degraded' : 'published',
        ...(change.failing_step ? { step: change.failing_step } : current.failing_step ? { step: current.failing_step } : {}),
        run_id: run.id,
        execution_id: execution.id,
        flow_digest: execution.flow_digest,
      },
    });
  });
}
