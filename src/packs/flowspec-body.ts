import { z } from 'zod';
import { digestOf, DIGEST_PATTERN } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import type { CompiledFlow, FlowSpec } from '../flow/types.js';
import type { ToolRegistry } from '../tools/types.js';
import { zodIssues } from './types.js';

// The parts of a FlowSpec a pack relies on; the engine re-validates the rest when it runs one.
const flowSpecShape = z.looseObject({
  flowspec: z.literal(1),
  name: z.string().min(1),
  inputs: z.record(z.string(), z.looseObject({ type: z.string(), required: z.boolean(), secret: z.boolean(), schema: z.record(z.string(), z.unknown()) })),
  steps: z
    .array(
      z.looseObject({
        id: z.string().min(1),
        tool: z.strictObject({ ref: z.string().min(1), version: z.string().min(1), contract_digest: z.string().regex(DIGEST_PATTERN) }),
        capabilities: z.array(z.enum(['net', 'fs', 'browser', 'spawn', 'secrets'])),
        args: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1),
});

/**
 * A compiled FlowSpec added as is (e.g. out/<name>.flowspec.json). Every step's pinned contract
 * must be exactly the runtime's, as the compiler would have pinned it today; otherwise the pack
 * would publish a flow no runtime can run (FlowError `pack_tool_mismatch`).
 */
export function flowSpecBody(text: string, file: string, tools: ToolRegistry): CompiledFlow {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FlowError('pack_body_invalid', prefixed('packs', `${file} is not JSON: ${(err as Error).message}`));
  }
  const parsed = flowSpecShape.safeParse(json);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    throw new FlowError('pack_body_invalid', prefixed('packs', `${file} is not a FlowSpec: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`), {
      data: { issues },
    });
  }
  const spec = parsed.data as unknown as FlowSpec;
  for (const step of spec.steps) {
    const runtime = tools.get(step.tool.ref, step.tool.version);
    const actual = runtime ? digestOf(runtime.contract) : undefined;
    if (actual !== step.tool.contract_digest) {
      const id = `${step.tool.ref}@${step.tool.version}`;
      throw new FlowError(
        'pack_tool_mismatch',
        prefixed('packs', `${file}: step "${step.id}" pins ${id} ${step.tool.contract_digest}, the runtime has ${actual ?? 'no such tool'}`),
        { data: { step: step.id, tool: id, expected: step.tool.contract_digest, actual: actual ?? null } },
      );
    }
  }
  return { spec, flow_digest: digestOf(spec) };
}
