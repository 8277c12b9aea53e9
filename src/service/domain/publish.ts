import { canonicalJson, type Digest } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import { compileFlow } from '../../flow/compile.js';
import type { FlowSpec } from '../../flow/types.js';
import type { AuthoringRecord, AutomationRecord, ServiceStores } from '../../ports/service-storage.js';
import { buildRecording } from '../../record/recording.js';
import { recordingToFlow } from '../../record/to-flow.js';
import type { ServiceDeps } from '../context.js';
import { audit } from './audit.js';
import { invalidRequest, serviceError, type Issue } from '../errors.js';
import { findCredentials, findOrgSecrets, findSecretFieldValues, leakMessage, type LeakFinding } from './secret-leak.js';

/**
 * Captured ops -> Recording -> FlowSpec, by the engine's own path (`buildRecording`, `recordingToFlow`,
 * `compileFlow`): the same ops, slots and task give the same digest as `flowctl record` then
 * `flowctl compile` in a fresh project. Refused with `secret_leak` before anything is stored.
 */

/** The org's secrets, opened (for leak checks only; never returned or logged). */
export async function orgSecretValues(deps: ServiceDeps, stores: ServiceStores, orgId: string): Promise<{ name: string; value: string }[]> {
  const out: { name: string; value: string }[] = [];
  for (const rec of await stores.secrets.list(orgId)) {
    try {
      out.push({ name: rec.name, value: deps.box.open(orgId, rec.name, rec.ciphertext) });
    } catch {
      // A secret sealed under a key no longer configured cannot leak through this capture check.
    }
  }
  return out;
}

export interface CompiledCapture {
  spec: FlowSpec;
  digest: Digest;
}

/**
 * Ops whose `slot` is in neither `input_slots` nor `secret_slots` (docs/hosted-api.md, "Authoring"):
 * the engine would keep their recorded value as a fixed one, and the gateway would then refuse that
 * input at run time. Refused at PATCH and at publish, one issue at each op's `slot`.
 */
export function unknownSlotIssues(ops: readonly unknown[], inputSlots: readonly string[], secretSlots: readonly string[]): Issue[] {
  const known = new Set([...inputSlots, ...secretSlots]);
  const issues: Issue[] = [];
  ops.forEach((op, i) => {
    const slot = op !== null && typeof op === 'object' ? (op as { slot?: unknown }).slot : undefined;
    if (typeof slot !== 'string' || known.has(slot)) return;
    issues.push({
      path: ['captured_ops', i, 'slot'],
      message: `slot "${slot.slice(0, 64)}" is in neither input_slots nor secret_slots: list it in input_slots (a caller's input) or secret_slots (an org secret), or remove the op's slot to keep its recorded value`,
      code: 'unknown_slot',
    });
  });
  return issues;
}

/** Compile the session's capture, or throw the structured problem (`invalid_request` or `secret_leak`). */
export async function compileCapture(
  deps: ServiceDeps,
  stores: ServiceStores,
  automation: AutomationRecord,
  session: AuthoringRecord,
): Promise<CompiledCapture> {
  if (!deps.tools) throw serviceError('not_ready', 'this service has no tools to compile against');
  if (automation.task.trim() === '') {
    throw invalidRequest([{ path: ['task'], message: 'the automation needs a task (its description) before it is published', code: 'required' }]);
  }
  const unknown = unknownSlotIssues(session.captured_ops, session.input_slots, session.secret_slots);
  if (unknown.length > 0) throw invalidRequest(unknown);
  const secrets = await orgSecretValues(deps, stores, automation.org_id);
  const early: LeakFinding[] = [
    ...findSecretFieldValues(session.captured_ops, session.secret_slots),
    ...findOrgSecrets(session.captured_ops, 'ops', secrets),
    ...findOrgSecrets(session.input_params, 'input_params', secrets),
  ];
  if (early.length > 0) throw serviceError('secret_leak', leakMessage(early), { findings: early });

  let spec: FlowSpec;
  let digest: Digest;
  try {
    const built = await buildRecording({
      name: automation.name,
      task: automation.task,
      ops: session.captured_ops,
      inputs: session.input_slots,
      secrets: session.secret_slots,
      readFile: async (path) => {
        const file = await stores.authoring.getFile(automation.org_id, automation.id, path);
        if (!file) throw new Error(`no file "${path}" was uploaded to this authoring session`);
        return file.bytes;
      },
    });
    const result = compileFlow(recordingToFlow(built.recording), { file: `automations/${automation.name}`, tools: deps.tools });
    if (!result.ok) {
      const issues: Issue[] = result.diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => ({ path: d.field ? d.field.split(/[.[\]]+/).filter(Boolean) : [], message: d.message, code: d.code }));
      throw invalidRequest(issues);
    }
    spec = result.spec;
    digest = result.flow_digest;
  } catch (err) {
    if (isFlowError(err, 'invalid_request')) throw err;
    if (isFlowError(err)) {
      const data = err.data as { issues?: { path: string; message: string }[] } | undefined;
      const issues: Issue[] = data?.issues?.map((i) => ({ path: i.path.split(/[.[\]]+/).filter(Boolean), message: i.message, code: err.code })) ?? [
        { path: ['captured_ops'], message: err.message.replace(/^(\[[^\]]+\]\s*)+/, ''), code: err.code },
      ];
      throw invalidRequest(issues);
    }
    throw invalidRequest([{ path: ['captured_ops'], message: (err as Error).message, code: 'capture_error' }]);
  }
  const text = canonicalJson(spec);
  const late = [...findOrgSecrets(text, 'flowspec', secrets), ...findCredentials(text, 'flowspec')];
  if (late.length > 0) throw serviceError('secret_leak', leakMessage(late), { findings: late });
  return { spec, digest };
}

/**
 * Make a compiled capture the live version, in one transaction: the version row, `live_digest`,
 * status `published` with drift cleared, the session marked published, and the audit entry.
 */
export async function publishVersion(deps: ServiceDeps, automation: AutomationRecord, compiled: CompiledCapture, actor: string): Promise<AutomationRecord> {
  if (!deps.engine) throw serviceError('not_ready', 'this service has no engine to store FlowSpecs in');
  const digest = await deps.engine.putSpec(compiled.spec);
  const now = deps.clock.now();
  const orgId = automation.org_id;
  return deps.storage.transaction(async (tx) => {
    await tx.versions.add({ automation_id: automation.id, org_id: orgId, flow_digest: digest, created_at: now, created_by: actor });
    const next = await tx.automations.update(orgId, automation.id, {
      live_digest: digest,
      status: 'published',
      needs_attention: false,
      failing_step: undefined,
    });
    await tx.authoring.update(orgId, automation.id, { state: 'published', error: null, updated_at: now });
    await audit(deps, tx, {
      org_id: orgId,
      actor,
      target: `automation:${automation.id}`,
      action: 'automation.publish',
      detail: { name: automation.name, flow_digest: digest, from: automation.live_digest ?? null },
    });
    return next!;
  });
}

/** Reopen a published session for editing (the live version stays live until the next publish), audited. */
export async function reopenCapture(deps: ServiceDeps, automation: AutomationRecord, session: AuthoringRecord, actor: string): Promise<AuthoringRecord> {
  if (session.state === 'editing') return session;
  const orgId = automation.org_id;
  return deps.storage.transaction(async (tx) => {
    const next = await tx.authoring.update(orgId, automation.id, { state: 'editing', updated_at: deps.clock.now() });
    await audit(deps, tx, { org_id: orgId, actor, target: `automation:${automation.id}`, action: 'automation.edit', detail: { name: automation.name } });
    return next!;
  });
}
