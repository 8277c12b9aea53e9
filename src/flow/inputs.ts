import { isFlowError } from '../errors.js';
import { SECRET_REF_PATTERN } from '../ports/secrets.js';
import { formatIssues, validateAgainstSchema } from '../tools/contract.js';
import type { JsonSchema } from '../tools/types.js';
import type { DiagnosticSink } from './diagnostics.js';
import type { FlowInput, FlowSpec, InputContract } from './types.js';

/**
 * Flow inputs -> the InputContract stored in a FlowSpec. Each contract carries the JSON Schema of
 * the value, so the launcher, MCP and `run` validate inputs with one schema:
 *
 * | type    | schema                                       |
 * |---------|----------------------------------------------|
 * | string  | `{type: 'string'}`                           |
 * | number  | `{type: 'number'}`                           |
 * | integer | `{type: 'integer'}`                          |
 * | boolean | `{type: 'boolean'}`                          |
 * | object  | `{type: 'object'}`                           |
 * | array   | `{type: 'array', items?}`                    |
 * | enum    | `{enum: values}`                             |
 * | secret  | `{type: 'string', pattern: '^secret:...'}`   |
 *
 * `description` is copied into the schema. `required` defaults to true when there is no default.
 */

/** `items` may be written like an input (`{type: enum, values}`) or as JSON Schema; both end as JSON Schema. */
export function itemsSchema(items: Record<string, unknown>): JsonSchema {
  if (items.type === 'enum' && Array.isArray(items.values)) {
    const { type: _t, values, ...rest } = items;
    return { ...rest, enum: values };
  }
  if (items.type === 'array' && items.items !== null && typeof items.items === 'object' && !Array.isArray(items.items)) {
    return { ...items, items: itemsSchema(items.items as Record<string, unknown>) };
  }
  return items;
}

export function inputSchema(def: FlowInput): JsonSchema {
  let schema: JsonSchema;
  if (def.secret) schema = { type: 'string', pattern: SECRET_REF_PATTERN.source };
  else if (def.type === 'enum') schema = { enum: def.values ?? [] };
  else if (def.type === 'array' && def.items) schema = { type: 'array', items: itemsSchema(def.items) };
  else schema = { type: def.type };
  if (def.description !== undefined) schema.description = def.description;
  return schema;
}

/** Normalize every input; a default that breaks its own type is a type_mismatch at the default. */
export function buildInputContracts(inputs: Record<string, FlowInput> | undefined, sink: DiagnosticSink): Record<string, InputContract> {
  const out: Record<string, InputContract> = {};
  for (const [name, def] of Object.entries(inputs ?? {})) {
    const schema = inputSchema(def);
    const contract: InputContract = {
      type: def.type,
      required: def.required ?? def.default === undefined,
      secret: def.secret === true,
      schema,
    };
    if (def.description !== undefined) contract.description = def.description;
    try {
      // Compiling the schema here catches a malformed `items` schema at compile time.
      validateAgainstSchema(schema, null);
    } catch (err) {
      if (!isFlowError(err, 'invalid_schema')) throw err;
      sink.error('bad_input', `input "${name}": "items" is not a valid JSON Schema (${err.message})`, ['inputs', name, 'items']);
      continue;
    }
    if (def.default !== undefined) {
      const check = validateAgainstSchema(schema, def.default);
      if (!check.ok) {
        const why = def.secret
          ? 'a secret default must be a reference like "secret:<name>", never a value'
          : def.type === 'enum'
            ? `must be one of ${(def.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`
            : formatIssues(check.issues);
        sink.error(def.secret ? 'secret_not_allowed' : 'type_mismatch', `input "${name}": default ${JSON.stringify(def.default)} does not fit type ${def.type}: ${why}`, [
          'inputs',
          name,
          'default',
        ]);
      }
      contract.default = def.default;
    }
    out[name] = contract;
  }
  return out;
}

/**
 * The schema a caller sees for a non-secret input: its value schema with its description and
 * default (the launcher's request body and OpenAPI, the MCP inputSchema).
 */
export function callerInputSchema(contract: InputContract): JsonSchema {
  const schema: JsonSchema = { ...contract.schema };
  if (contract.description !== undefined) schema.description = contract.description;
  if (contract.default !== undefined && schema.default === undefined) schema.default = contract.default;
  return schema;
}

/** Names of a flow's secret inputs, sorted: they are resolved from the secret store, never passed as values. */
export function secretInputNames(spec: FlowSpec): string[] {
  return Object.entries(spec.inputs)
    .filter(([, c]) => c.secret)
    .map(([n]) => n)
    .sort();
}
