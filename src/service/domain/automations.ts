import { isFlowError } from '../../errors.js';
import type { AuthoringRecord, AutomationRecord, Role } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { invalidRequest, serviceError } from '../errors.js';
import { audit } from './audit.js';

/** Automations: drafts, their settings, rollback, and the live FlowSpec by name (docs/hosted-api.md, "Automations"). */

/** A new draft and its empty authoring session, in the caller's transaction. */
export function newDraft(deps: ServiceDeps, orgId: string, body: { name: string; site: string; task?: string; params?: unknown[] }, example = false) {
  const now = deps.clock.now();
  const automation: AutomationRecord = {
    id: deps.ids.uuid(),
    org_id: orgId,
    name: body.name,
    task: body.task ?? '',
    site: body.site,
    mcp_enabled: true,
    created_at: now,
    status: 'draft',
    needs_attention: false,
    example,
    params: body.params ?? [],
  };
  const params = (body.params ?? []) as { name: string; required?: boolean; sample?: string }[];
  const session: AuthoringRecord = {
    automation_id: automation.id,
    org_id: orgId,
    captured_ops: [],
    input_params: params.map((p) => ({ name: p.name, required: p.required ?? false, sample: p.sample ?? '' })),
    input_slots: [],
    secret_slots: [],
    files: [],
    updated_at: now,
    state: 'editing',
  };
  return { automation, session };
}

/**
 * Store a new draft and its session, audited (`detail` adds to the entry). `nameTaken` answers the
 * automation row's unique-name conflict (without it the conflict is thrown as it is).
 */
export async function storeDraft(
  deps: ServiceDeps,
  actor: string,
  draft: { automation: AutomationRecord; session: AuthoringRecord },
  detail: Record<string, unknown> = {},
  nameTaken?: () => Error,
): Promise<void> {
  const { automation, session } = draft;
  await deps.storage.transaction(async (tx) => {
    try {
      await tx.automations.create(automation);
    } catch (err) {
      if (nameTaken && isFlowError(err, 'conflict')) throw nameTaken();
      throw err;
    }
    await tx.authoring.create(session);
    await audit(deps, tx, {
      org_id: automation.org_id,
      actor,
      target: `automation:${automation.id}`,
      action: 'automation.create',
      detail: { name: automation.name, ...detail },
    });
  });
}

/** Create a draft automation (409 name_taken when the org has one of that name). */
export async function createAutomation(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  body: { name: string; site: string; task?: string; params?: unknown[] },
): Promise<AutomationRecord> {
  const draft = newDraft(deps, orgId, body);
  await storeDraft(deps, actor, draft, {}, () => serviceError('name_taken', `this org already has an automation named "${body.name}"`));
  return draft.automation;
}

/** An automation of the org, or not_found. */
export async function mustGetAutomation(deps: ServiceDeps, orgId: string, id: string): Promise<AutomationRecord> {
  const a = await deps.storage.automations.get(orgId, id);
  if (!a) throw serviceError('not_found', 'no such automation in this org');
  return a;
}

/** Correct `site` or `task` (any member); `mcp_enabled` is owner only, and audited when it changes. */
export async function updateAutomation(
  deps: ServiceDeps,
  caller: { orgId: string; actor: string; role: Role },
  id: string,
  body: { site?: string; task?: string; mcp_enabled?: boolean },
): Promise<AutomationRecord> {
  const { orgId, actor, role } = caller;
  const before = await mustGetAutomation(deps, orgId, id);
  if (body.mcp_enabled !== undefined && role !== 'owner') throw serviceError('forbidden', 'only an owner may set mcp_enabled');
  return deps.storage.transaction(async (tx) => {
    const next = await tx.automations.update(orgId, id, body);
    if (body.mcp_enabled !== undefined && body.mcp_enabled !== before.mcp_enabled) {
      await audit(deps, tx, {
        org_id: orgId,
        actor,
        target: `automation:${id}`,
        action: 'automation.mcp_enabled',
        detail: { name: before.name, to: body.mcp_enabled },
      });
    }
    return next!;
  });
}

/** Point the live version at an earlier published one; nothing is rebuilt. */
export async function rollbackAutomation(deps: ServiceDeps, orgId: string, actor: string, id: string, flowDigest: string): Promise<AutomationRecord> {
  const before = await mustGetAutomation(deps, orgId, id);
  if (!(await deps.storage.versions.get(orgId, id, flowDigest))) {
    throw invalidRequest([{ path: ['flow_digest'], message: 'not a published version of this automation', code: 'unknown_version' }]);
  }
  return deps.storage.transaction(async (tx) => {
    const next = await tx.automations.update(orgId, id, { live_digest: flowDigest, status: 'published', needs_attention: false, failing_step: undefined });
    await audit(deps, tx, {
      org_id: orgId,
      actor,
      target: `automation:${id}`,
      action: 'automation.rollback',
      detail: { name: before.name, from: before.live_digest ?? null, to: flowDigest },
    });
    return next!;
  });
}

/**
 * The org-namespaced active-deploy lookup: (org, name) -> live digest -> FlowSpec. The gateway and the
 * live FlowSpec route both resolve through here, so the dashboard shows the bytes the gateway runs.
 */
export async function liveSpec(deps: ServiceDeps, orgId: string, name: string) {
  const a = await deps.storage.automations.getByName(orgId, name);
  const digest = a && a.status !== 'draft' ? a.live_digest : undefined;
  if (!a || !digest || !deps.engine) return undefined;
  const resolved = await deps.engine.resolve({ digest: digest as `sha256:${string}` });
  return resolved ? { automation: a, digest: resolved.digest, spec: resolved.spec } : undefined;
}
