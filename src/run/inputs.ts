import { canonicalJson, digestBytes, inCanonicalForm, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import { INPUT_LIMITS, inputValueIssues } from '../flow/inputs.js';
import type { FlowSpec } from '../flow/types.js';
import { declaredSecretRef, isSecretRef } from '../secrets/refs.js';
import { validateAgainstSchema } from '../tools/contract.js';

export interface InputIssue {
  /** Dotted path: the input name, then the path inside its value (`user.email`, `tags[0]`). */
  path: string;
  message: string;
}

export interface ResolvedInputs {
  /** Declared inputs with defaults applied; secret inputs as `secret:<name>` references. */
  inputs: Record<string, unknown>;
  /** digestOf(inputs): recorded as `inputs_digest` on every journal entry. */
  inputs_digest: Digest;
}

export interface ResolveInputsOptions {
  /**
   * Let a caller name any secret for a secret input (`secret:<other>`). Default false: a secret
   * input resolves only the reference its flow declares (its `default`, else `secret:<input name>`),
   * so whoever starts a run cannot choose which secret is sent where. `serve --allow-secret-refs`.
   */
  allowSecretRefs?: boolean;
}

/**
 * Check caller inputs against a FlowSpec's inputs contract and apply defaults, before any run
 * exists. Every issue is listed in FlowError `invalid_inputs` (`data.issues: [{path, message}]`).
 *
 * - Undeclared names are issues. A missing required input is an issue; a missing optional input
 *   takes its `default` (when it has one) or stays absent.
 * - A secret input takes only a reference `secret:<name>`; when omitted it is the reference its
 *   flow declares (its `default`, else `secret:<input name>`). A plain value is an issue, and its
 *   text never enters the message. A reference to another secret is an issue too, unless
 *   `options.allowSecretRefs`.
 * - Every value must be JSON the contract can store and serialise at any later point (see
 *   inputValueIssues): no value nested deeper than INPUT_LIMITS.maxDepth, no lone surrogates, and
 *   the resolved inputs at most INPUT_LIMITS.maxBytes as canonical JSON. These are checked first,
 *   without recursion, so a hostile value (10,000 levels deep, cyclic, huge) is refused with
 *   `invalid_inputs` before any schema check, copy or serialisation touches it.
 */
export function resolveInputs(spec: FlowSpec, given: unknown = {}, options: ResolveInputsOptions = {}): ResolvedInputs {
  const issues: InputIssue[] = [];
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw invalid([{ path: '', message: 'inputs must be a JSON object of input names to values' }]);
  }
  const provided = given as Record<string, unknown>;
  const inputs: Record<string, unknown> = {};
  for (const name of Object.keys(provided).sort()) {
    if (!Object.hasOwn(spec.inputs, name) && provided[name] !== undefined) {
      issues.push({ path: name, message: `is not a declared input of flow "${spec.name}"` });
    }
  }
  for (const [name, contract] of Object.entries(spec.inputs)) {
    let value = provided[name];
    if (contract.secret) {
      const declared = declaredSecretRef(name, contract);
      if (value === undefined) value = declared;
      if (!isSecretRef(value)) {
        issues.push({ path: name, message: 'is a secret input: pass a reference secret:<name>, never the value itself' });
        continue;
      }
      if (value !== declared && options.allowSecretRefs !== true) {
        issues.push({ path: name, message: secretRefRefused(declared) });
        continue;
      }
      inputs[name] = value;
      continue;
    }
    const fromDefault = value === undefined;
    if (value === undefined) {
      if (contract.default !== undefined) value = contract.default;
      else if (contract.required) {
        issues.push({ path: name, message: 'is required' });
        continue;
      } else continue;
    }
    const bounds = inputValueIssues(value);
    if (bounds.length > 0) {
      for (const issue of bounds) issues.push({ path: `${name}${issue.path}`, message: issue.message });
      continue;
    }
    if (fromDefault) value = structuredClone(value);
    const check = validateAgainstSchema(contract.schema, value);
    for (const issue of check.issues) {
      issues.push({ path: issue.path === '' ? name : issue.path.startsWith('[') ? `${name}${issue.path}` : `${name}.${issue.path}`, message: issue.message });
    }
    inputs[name] = value;
  }
  if (issues.length > 0) throw invalid(issues);
  const ordered = inCanonicalForm(inputs);
  const text = canonicalJson(ordered);
  if (Buffer.byteLength(text, 'utf8') > INPUT_LIMITS.maxBytes) {
    throw invalid([
      { path: '', message: `the inputs are larger than ${INPUT_LIMITS.maxBytes} bytes as JSON (the inputs contract allows at most ${INPUT_LIMITS.maxBytes})` },
    ]);
  }
  return { inputs: ordered, inputs_digest: digestBytes(text) };
}

/** The issue of a secret input given a reference other than its declared one (the given one is not repeated). */
export function secretRefRefused(declared: string): string {
  return `is a secret input bound to ${declared}: a caller may not name another secret (the operator allows it with serve --allow-secret-refs, engine option allowSecretRefs); omit it to use ${declared}`;
}

function invalid(issues: InputIssue[]): FlowError {
  const text = issues.map((i) => (i.path ? `${i.path} ${i.message}` : i.message)).join('; ');
  return new FlowError('invalid_inputs', `[flowctl] [inputs] inputs do not match the flow's inputs contract: ${text}`, { data: { issues } });
}
