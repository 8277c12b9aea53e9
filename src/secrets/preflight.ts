import { FlowError, isFlowError } from '../errors.js';
import { collectReferences } from '../flow/expr.js';
import type { FlowSpec } from '../flow/types.js';
import type { SecretStore } from '../ports/secrets.js';

/**
 * Names of the secret inputs a run can resolve: those a step with the `secrets` capability refers to
 * in its arguments (the compiler grants `secrets` to exactly those steps). Sorted.
 */
export function secretInputsInUse(spec: FlowSpec): string[] {
  const names = new Set<string>();
  for (const step of spec.steps) {
    if (!step.capabilities.includes('secrets')) continue;
    let refs: ReturnType<typeof collectReferences>;
    try {
      refs = collectReferences(step.args);
    } catch {
      continue; // a malformed expression fails its step when it runs (compile rejects those)
    }
    for (const ref of refs) if (ref.kind === 'input' && spec.inputs[ref.name]?.secret) names.add(ref.name);
  }
  return [...names].sort();
}

/**
 * Resolve every secret input a run can use, before the run exists: a missing secret is found before
 * any step (and any outward effect) runs, not halfway through. Throws FlowError `secret_not_found`
 * listing every input that does not resolve (`data.issues: [{path, message}]`); the messages carry
 * references and the store's reason, never a value. Returns the resolved values, so the run's mask
 * knows them from its first entry.
 */
export async function resolveSecretInputs(spec: FlowSpec, inputs: Record<string, unknown>, store: SecretStore | undefined): Promise<string[]> {
  const issues: { path: string; message: string }[] = [];
  const values: string[] = [];
  for (const name of secretInputsInUse(spec)) {
    const ref = inputs[name];
    if (typeof ref !== 'string') continue;
    if (!store) {
      issues.push({ path: name, message: `needs ${ref}, but the engine has no secret store` });
      continue;
    }
    try {
      values.push(await store.resolve(ref));
    } catch (err) {
      // A store's FlowError names the reference and where it looked; anything else is reported by kind only.
      const why = isFlowError(err) ? err.message : `the secret store ${store.name} failed (${err instanceof Error ? err.name : typeof err})`;
      issues.push({ path: name, message: `needs ${ref}, which does not resolve: ${why}` });
    }
  }
  if (issues.length > 0) {
    const list = issues.map((i) => `input "${i.path}" ${i.message}`).join('; ');
    throw new FlowError('secret_not_found', `[flowctl] [secrets] ${list}; no run started, nothing ran`, { data: { issues } });
  }
  return values;
}
