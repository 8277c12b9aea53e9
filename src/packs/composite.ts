import { canonicalJson } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import type { Engine } from '../engine/types.js';
import type { FlowSpec } from '../flow/types.js';
import { CAPABILITIES, type Capability, type JsonSchema, type Tool, type ToolContext, type ToolContract } from '../tools/types.js';
import type { DraftTool } from './types.js';

/**
 * Composite tools: a tool contract implemented by a flow of the same pack. The contract's
 * input_schema and capabilities are derived from the flow, so the contract can never promise less
 * than the flow does (an outward step always shows in the capabilities, hence in effect summaries).
 */

/** The tool input schema of a flow: one property per input, required when required and without default. */
export function flowInputSchema(spec: FlowSpec): JsonSchema {
  const names = Object.keys(spec.inputs).sort();
  const required = names.filter((n) => spec.inputs[n]!.required && spec.inputs[n]!.default === undefined);
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, spec.inputs[n]!.schema])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

/** Union of the steps' capabilities, in the canonical CAPABILITIES order. */
export function flowCapabilities(spec: FlowSpec): Capability[] {
  const used = new Set(spec.steps.flatMap((s) => s.capabilities));
  return CAPABILITIES.filter((c) => used.has(c));
}

/** The full contract of a composite draft tool; explicit schema or capabilities must equal the derived ones. */
export function compositeContract(tool: DraftTool, spec: FlowSpec): ToolContract {
  const id = `${tool.ref}@${tool.version}`;
  const input_schema = flowInputSchema(spec);
  const capabilities = flowCapabilities(spec);
  if (tool.input_schema && canonicalJson(tool.input_schema) !== canonicalJson(input_schema)) {
    throw new FlowError(
      'pack_tool_invalid',
      prefixed('packs', `tool ${id}: input_schema differs from the inputs of flow "${spec.name}"; omit it to derive it`),
      {
        data: { tool: id, expected: input_schema, actual: tool.input_schema },
      },
    );
  }
  if (tool.capabilities && canonicalJson([...tool.capabilities].sort()) !== canonicalJson([...capabilities].sort())) {
    throw new FlowError(
      'pack_tool_invalid',
      prefixed(
        'packs',
        `tool ${id}: capabilities [${tool.capabilities.join(', ')}] differ from flow "${spec.name}"'s [${capabilities.join(', ')}]; omit them to derive them`,
      ),
      {
        data: { tool: id, expected: capabilities, actual: tool.capabilities },
      },
    );
  }
  return { ref: tool.ref, version: tool.version, description: tool.description, input_schema, output_schema: tool.output_schema ?? {}, capabilities };
}

/**
 * Runs a FlowSpec for a composite tool call and resolves with the flow's output; rejects (FlowError)
 * when the run does not succeed. `ctx` is the calling step's context (signal, cwd, effects).
 */
export type FlowRunner = (spec: FlowSpec, inputs: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;

/** A runnable Tool for a composite contract. */
export function compositeTool(contract: ToolContract, spec: FlowSpec, runFlow: FlowRunner): Tool {
  return {
    contract,
    run: (input, ctx) => runFlow(spec, (input ?? {}) as Record<string, unknown>, ctx),
  };
}

/**
 * A FlowRunner over an Engine: the composite tool's flow runs as a run of its own (stored and
 * inspectable like any other), without a second confirmation (the calling step's capabilities, which
 * include the flow's, were already confirmed). Its recorded effects are reported on the calling step
 * so the caller's journal shows them too. `getEngine` is a getter because the engine's tool registry
 * contains these very tools: build the tools, then the engine, and the getter closes the loop.
 */
export function flowRunnerFromEngine(getEngine: () => Pick<Engine, 'run'>): FlowRunner {
  return async (spec, inputs, ctx) => {
    // The calling run's tool policy holds inside the flow too (its capabilities and egress guard).
    const run = await getEngine().run({ spec }, inputs, { signal: ctx.signal, ...(ctx.policy ? { toolPolicy: ctx.policy } : {}) });
    for (const entry of run.journal) {
      if (entry.event === 'effect_recorded') ctx.effect({ kind: entry.effect.kind, target: entry.effect.target });
    }
    if (run.status === 'succeeded') return run.output;
    const finished = run.journal.find((e) => e.event === 'run_finished');
    const error = finished && finished.event === 'run_finished' ? finished.error : undefined;
    throw new FlowError(
      'composite_tool_failed',
      prefixed('packs', `flow "${spec.name}" (run ${run.id}) ${run.status}${error ? `: ${error.code}: ${error.message}` : ''}`),
      { data: { run_id: run.id, status: run.status, error } },
    );
  };
}
