import type { FlowSpec, StepSpec } from '../flow/types.js';
import { OUTWARD_CAPABILITIES } from '../tools/types.js';

/** The MCP tool annotations of a flow (all hints; see docs/mcp.md, "Annotations"). */
export interface FlowToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

// fs tools that only read (the same rule as the effect summary of src/run/effects.ts).
const READ_ONLY_FS = /\/(read|list|paths|stat|exists)$/;
const SAFE_HTTP_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether an outward step only reads: an fs tool that reads, or `http/request` whose method is
 * absent (GET) or a literal GET, HEAD or OPTIONS. A method given by an expression is unknown until
 * the run, so it counts as a write. Browser and spawn steps never count as reads: a click or a
 * command can change anything.
 */
function readsOnly(step: StepSpec): boolean {
  const outward = step.capabilities.filter((c) => OUTWARD_CAPABILITIES.includes(c));
  if (outward.length === 0) return true;
  if (outward.length !== 1) return false;
  if (outward[0] === 'fs') return READ_ONLY_FS.test(step.tool.ref);
  if (outward[0] === 'net' && step.tool.ref === 'http/request') {
    const method = step.args.method;
    return method === undefined || (typeof method === 'string' && !method.includes('${') && SAFE_HTTP_METHODS.has(method.toUpperCase()));
  }
  return false;
}

/**
 * Annotations from the steps' resolved capabilities:
 * - readOnlyHint: every step is pure or only reads (see readsOnly). A pure flow is read-only.
 * - destructiveHint: not read-only. The engine cannot tell a harmless POST, click or command from a
 *   destructive one, so every writing flow is marked destructive (MCP's own default).
 * - idempotentHint: read-only. A writing flow may repeat its effects when called again.
 * - openWorldHint: some step declares `net` or `browser` (it talks to the world outside the machine).
 */
export function toolAnnotations(spec: FlowSpec): FlowToolAnnotations {
  const readOnly = spec.steps.every(readsOnly);
  const openWorld = spec.steps.some((s) => s.capabilities.includes('net') || s.capabilities.includes('browser'));
  return { readOnlyHint: readOnly, destructiveHint: !readOnly, idempotentHint: readOnly, openWorldHint: openWorld };
}
