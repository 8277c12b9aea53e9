import { z } from 'zod';
import { DIGEST_PATTERN } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import { CAPABILITIES } from '../tools/types.js';

/**
 * The shape of a FlowSpec the engine will store and run (FlowSpecs normally come from compile; this
 * guards hand-written or transported ones). Semantics (tools, expressions) are compile's job.
 */
const inputContract = z.object({
  type: z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array', 'enum']),
  description: z.string().optional(),
  required: z.boolean(),
  default: z.unknown().optional(),
  secret: z.boolean(),
  schema: z.record(z.string(), z.unknown()),
});

const stepSpec = z.object({
  id: z.string().min(1),
  tool: z.object({ ref: z.string().min(1), version: z.string().min(1), contract_digest: z.string().regex(DIGEST_PATTERN) }),
  capabilities: z.array(z.enum(CAPABILITIES as unknown as [string, ...string[]])),
  args: z.record(z.string(), z.unknown()),
  if: z.string().optional(),
  retry: z.object({
    max_attempts: z.number().int().min(1),
    backoff_ms: z.number().min(0),
    backoff_factor: z.number().min(1),
  }),
  timeout_ms: z.number().int().min(1),
  optional: z.literal(true).optional(),
});

const flowSpec = z.object({
  flowspec: z.literal(1),
  name: z.string().min(1),
  description: z.string().optional(),
  inputs: z.record(z.string(), inputContract),
  steps: z.array(stepSpec),
  output: z.unknown().optional(),
});

export function assertFlowSpec(value: unknown): asserts value is FlowSpec {
  const r = flowSpec.safeParse(value);
  if (r.success) {
    // One pass with a Set: an indexOf per step is quadratic (milliseconds at 1,000 steps, paid by every replay).
    const seen = new Set<string>();
    const dup = r.data.steps.find((s) => seen.size === seen.add(s.id).size)?.id;
    if (dup === undefined) return;
    throw new FlowError('invalid_spec', `[flowctl] [engine] not a FlowSpec: step id "${dup}" appears twice`, {
      data: { issues: [{ path: 'steps', message: `duplicate step id "${dup}"` }] },
    });
  }
  const issues = r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  throw new FlowError('invalid_spec', `[flowctl] [engine] not a FlowSpec: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
    data: { issues },
  });
}
