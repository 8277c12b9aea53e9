import { FlowError } from '../errors.js';
import { checkEgressPolicy, type EgressLookup, type EgressPolicy } from './egress.js';
import { CAPABILITIES, type Capability, type Tool } from './types.js';

/**
 * What the tools of a run may do (docs/tools.md, "Policy"). Given on the engine
 * (`createEngine({toolPolicy})`) or per run (`RunOptions.toolPolicy`, which replaces the engine's).
 * The default (no policy) is permissive: every capability, no egress guard.
 */
export interface ToolPolicy {
  /**
   * The capabilities a step may use. A step whose tool contract declares another one (or `secrets`
   * when the step is fed a secret) fails `tool_denied` before the tool runs. Default: all.
   */
  capabilities?: readonly Capability[];
  /**
   * The egress guard for `net` and `browser` tools: private, loopback, link-local, multicast,
   * unspecified, reserved and cloud-metadata addresses are refused (`egress_denied`) unless
   * allowlisted, checked at connect time on every request and redirect. Default: no guard.
   */
  egress?: EgressPolicy;
}

/**
 * The policy for a shared host: no `spawn` and no `fs` (so no `shell/exec`, `fs/read`, `fs/write` or
 * browser upload from disk; an upload reading the run's file source, `RunOptions.files`, needs no
 * `fs`), `net`, `browser` and `secrets` allowed, and the egress guard on with the given allowlist
 * (default empty) and denylist (destinations refused even when allowlisted).
 */
export function hostedToolPolicy(options: { allow?: readonly string[]; deny?: readonly string[]; lookup?: EgressLookup } = {}): ToolPolicy {
  const policy: ToolPolicy = {
    capabilities: ['net', 'browser', 'secrets'],
    egress: {
      allow: [...(options.allow ?? [])],
      ...(options.deny?.length ? { deny: [...options.deny] } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
    },
  };
  checkToolPolicy(policy);
  return policy;
}

/** Check a policy's shape; throws FlowError `invalid_tool_policy` with what is wrong. */
export function checkToolPolicy(policy: ToolPolicy): void {
  if (policy === null || typeof policy !== 'object') throw new FlowError('invalid_tool_policy', '[flowctl] [tools] a tool policy is an object');
  if (policy.capabilities !== undefined) {
    if (!Array.isArray(policy.capabilities))
      throw new FlowError('invalid_tool_policy', '[flowctl] [tools] toolPolicy.capabilities must be a list of capabilities');
    for (const c of policy.capabilities) {
      if (!CAPABILITIES.includes(c)) {
        throw new FlowError(
          'invalid_tool_policy',
          `[flowctl] [tools] toolPolicy.capabilities: unknown capability ${JSON.stringify(c)}; known: ${CAPABILITIES.join(', ')}`,
          { data: { capability: c } },
        );
      }
    }
  }
  if (policy.egress !== undefined) {
    if (policy.egress === null || typeof policy.egress !== 'object')
      throw new FlowError('invalid_tool_policy', '[flowctl] [tools] toolPolicy.egress must be an object');
    checkEgressPolicy(policy.egress);
  }
}

/**
 * The capabilities a step uses: its tool contract's, with `secrets` only when the step is fed a secret
 * (its StepSpec capabilities say so), and without `fs` when the tool reads its files through the run's
 * file source (`flags.filesFromSource`) and the run supplies one.
 */
export function usedCapabilities(tool: Pick<Tool, 'contract' | 'flags'>, stepCapabilities: readonly Capability[], run: { files: boolean }): Capability[] {
  return tool.contract.capabilities.filter((c) => {
    if (c === 'secrets') return stepCapabilities.includes('secrets');
    if (c === 'fs') return !(run.files && tool.flags?.filesFromSource === true);
    return true;
  });
}

/** The capabilities a step would use (usedCapabilities) that the policy does not allow. */
export function deniedCapabilities(
  policy: ToolPolicy | undefined,
  tool: Pick<Tool, 'contract' | 'flags'>,
  stepCapabilities: readonly Capability[],
  run: { files: boolean },
): Capability[] {
  if (!policy?.capabilities) return [];
  const allowed = policy.capabilities;
  return usedCapabilities(tool, stepCapabilities, run).filter((c) => !allowed.includes(c));
}
