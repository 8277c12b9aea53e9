import { deepFreeze, type Digest } from '../canonical.js';
import { hasExpression, parseTemplate } from '../flow/expr.js';
import { callerInputSchema, secretInputNames } from '../flow/inputs.js';
import { inferType } from '../flow/static-types.js';
import type { FlowSpec } from '../flow/types.js';
import type { JsonSchema, ToolRegistry } from '../tools/types.js';
import { toolAnnotations, type FlowToolAnnotations } from './annotations.js';

/**
 * The JSON Schemas of a flow as an MCP tool. MCP requires both schemas to have a root
 * `type: "object"` (docs/mcp.md, "Schemas").
 */

/** The description of a leaf whose type the compiler cannot infer (it accepts any JSON value). */
const OPEN = 'any JSON value (its type is known only when the flow runs)';

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The tool's inputSchema: the flow's typed inputs by name, secret inputs LEFT OUT. A secret input
 * is never an argument: the engine resolves it as its default reference `secret:<input name>` from
 * the secret store, so a secret value never travels through the MCP client or the model.
 * Inputs with a default are optional; names the flow does not declare are refused.
 */
export function toolInputSchema(spec: FlowSpec): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, contract] of Object.entries(spec.inputs)) {
    if (contract.secret) continue;
    properties[name] = callerInputSchema(contract);
    if (contract.required && contract.default === undefined) required.push(name);
  }
  return { type: 'object', properties, required: required.sort(), additionalProperties: false };
}

/** Names of the flow's secret inputs (resolved from the secret store, never arguments). */
export { secretInputNames };

export interface ToolOutputShape {
  /** The outputSchema; undefined when the flow has no output projection (no structuredContent then). */
  schema?: JsonSchema;
  /**
   * True when the projection is not a mapping: the run's output is then returned as
   * `structuredContent: {value: <output>}`, because MCP structured content must be an object.
   */
  wrapped: boolean;
}

/**
 * The outputSchema from the flow's output projection. The decision to wrap is static (from the
 * projection's shape, never from a run's value), so every result of the tool matches its schema:
 * a mapping is the object itself; a single expression, a list, a string or a literal is wrapped as
 * `{value}`. Leaf types come from the compiler's static types; an expression can also be null at
 * run time (a reference to a skipped step or an absent optional input is null), so expression
 * leaves are `anyOf` their inferred types and null, and a leaf whose type cannot be inferred is left open (any value, with a description saying so).
 * `tools` (optional) lets step outputs be typed from their tools' contracts.
 */
export function toolOutputShape(spec: FlowSpec, tools?: ToolRegistry): ToolOutputShape {
  if (spec.output === undefined) return { wrapped: false };
  const stepOutputs: Record<string, JsonSchema | undefined> = {};
  for (const step of spec.steps) stepOutputs[step.id] = tools?.get(step.tool.ref, step.tool.version)?.contract.output_schema;
  const env = { inputs: spec.inputs, stepOutputs };

  const ofValue = (value: unknown): JsonSchema => {
    if (typeof value === 'string') {
      if (!hasExpression(value)) return { type: 'string' };
      const template = parseTemplate(value);
      if (!template.whole) return { type: 'string' };
      const part = template.parts[0];
      if (typeof part === 'string' || part === undefined) return { type: 'string' };
      const types = inferType(part.expr, env);
      if (types === undefined || types.size === 0) return { description: OPEN };
      // anyOf of single types rather than a `type` array: more MCP clients map that form.
      return { anyOf: [...new Set([...types, 'null'])].sort().map((type) => ({ type })) };
    }
    if (Array.isArray(value)) return { type: 'array' };
    if (isPlainObject(value)) return objectSchema(value);
    if (value === null) return { type: 'null' };
    return { type: typeof value === 'number' ? 'number' : typeof value };
  };
  const objectSchema = (value: Record<string, unknown>): JsonSchema => {
    const properties: Record<string, JsonSchema> = {};
    for (const [k, v] of Object.entries(value)) properties[k] = ofValue(v);
    return { type: 'object', properties, required: Object.keys(value).sort(), additionalProperties: false };
  };

  if (isPlainObject(spec.output)) return { schema: objectSchema(spec.output), wrapped: false };
  return {
    schema: { type: 'object', properties: { value: ofValue(spec.output) }, required: ['value'], additionalProperties: false },
    wrapped: true,
  };
}

/** Everything of a flow's MCP tool that depends on its FlowSpec alone (frozen: shared between servers). */
export interface ToolShape {
  inputSchema: JsonSchema;
  output: ToolOutputShape;
  annotations: FlowToolAnnotations;
  secretInputs: string[];
}

// Tool shapes by tool registry (step outputs are typed from its contracts) and FlowSpec digest: built
// once per digest and reused by every server over the same registry, so a per-request server costs
// no schema work. Bounded per registry; an evicted digest is built again on its next use.
const SHAPES_PER_REGISTRY = 4096;
const NO_TOOLS = {};
const shapes = new WeakMap<object, Map<Digest, ToolShape>>();

/**
 * The tool shape of the FlowSpec `spec`, whose digest is `digest` (the caller computed it once), from
 * the cache by digest. A registry's contracts are read when a digest is first built: register tools
 * before serving.
 */
export function toolShapeOf(spec: FlowSpec, digest: Digest, tools?: ToolRegistry): ToolShape {
  const key = tools ?? NO_TOOLS;
  let byDigest = shapes.get(key);
  if (!byDigest) {
    byDigest = new Map();
    shapes.set(key, byDigest);
  }
  let shape = byDigest.get(digest);
  if (!shape) {
    shape = deepFreeze({
      inputSchema: toolInputSchema(spec),
      output: toolOutputShape(spec, tools),
      annotations: toolAnnotations(spec),
      secretInputs: secretInputNames(spec),
    });
    if (byDigest.size >= SHAPES_PER_REGISTRY) byDigest.delete(byDigest.keys().next().value!);
    byDigest.set(digest, shape);
  }
  return shape;
}
