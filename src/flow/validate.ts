import type { DiagnosticSink, PathSegment } from './diagnostics.js';
import type { Flow, FlowInput, FlowStep, InputType } from './types.js';

/**
 * Structural validation of a Flow: the shape of every field, names and duplicates. Semantic checks
 * (tools, references, types, secrets) come after, in check.ts, on a Flow that passed this.
 */

/** The spec's slug rule for flow names. */
export const FLOW_NAME = /^[a-z0-9][a-z0-9-]*$/;
export const FLOW_NAME_MAX = 64;
/** Input names and step ids: usable as-is in expressions (`inputs.user_id`, `steps.fetch-page`). */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$/;
export const IDENTIFIER_MAX = 64;
/** `namespace/name@range`: range is `1`, `1.2` or `1.2.3`. */
export const TOOL_REF = /^([a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)+)@(\d+(?:\.\d+){0,2})$/;

export const INPUT_TYPES: readonly InputType[] = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'enum'];

const FLOW_KEYS = ['name', 'description', 'inputs', 'steps', 'output'];
const INPUT_KEYS = ['type', 'description', 'required', 'default', 'secret', 'values', 'items'];
const STEP_KEYS = ['id', 'tool', 'args', 'if', 'retry', 'timeout_ms', 'optional'];
const RETRY_KEYS = ['max_attempts', 'backoff_ms', 'backoff_factor'];

/** Bounds of the retry policy and timeout (documented in docs/flow-language.md). */
export const LIMITS = {
  max_attempts: [1, 100],
  backoff_ms: [0, 600_000],
  backoff_factor: [1, 10],
  timeout_ms: [1, 3_600_000],
} as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}

function unknownKeys(sink: DiagnosticSink, obj: Obj, known: string[], path: PathSegment[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      sink.error('unknown_field', `unknown field "${key}" in ${where} (known: ${known.join(', ')})`, [...path, key], { key: true });
    }
  }
}

function allFinite(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(allFinite);
  if (isObj(value)) {
    for (const k in value) if (!allFinite(value[k])) return false;
  }
  return true;
}

/** Numbers YAML allows but JSON does not (.inf, .nan) cannot enter a FlowSpec. */
function checkJson(sink: DiagnosticSink, value: unknown, path: PathSegment[]): void {
  // Fast path without building paths: almost every value is fine.
  if (allFinite(value)) return;
  if (typeof value === 'number' && !Number.isFinite(value)) {
    sink.error('bad_type', `${value} is not a JSON number`, path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkJson(sink, v, [...path, i]));
  } else if (isObj(value)) {
    for (const [k, v] of Object.entries(value)) checkJson(sink, v, [...path, k]);
  }
}

function checkInput(sink: DiagnosticSink, name: string, def: unknown, path: PathSegment[]): void {
  if (!IDENTIFIER.test(name) || name.length > IDENTIFIER_MAX) {
    sink.error('bad_name', `input name "${name}" must match ${IDENTIFIER.source} (at most ${IDENTIFIER_MAX} characters)`, path, { key: true });
  }
  if (!isObj(def)) {
    sink.error('not_a_mapping', `input "${name}" must be a mapping with at least "type", got ${kind(def)}`, path);
    return;
  }
  unknownKeys(sink, def, INPUT_KEYS, path, `input "${name}"`);
  if (def.type === undefined) sink.error('missing_field', `input "${name}" needs a "type" (${INPUT_TYPES.join(', ')})`, path);
  else if (typeof def.type !== 'string' || !INPUT_TYPES.includes(def.type as InputType)) {
    sink.error('bad_type', `input "${name}" has type ${JSON.stringify(def.type)}; use one of ${INPUT_TYPES.join(', ')}`, [...path, 'type']);
  }
  for (const key of ['required', 'secret'] as const) {
    if (def[key] !== undefined && typeof def[key] !== 'boolean') {
      sink.error('bad_type', `input "${name}": "${key}" must be true or false`, [...path, key]);
    }
  }
  if (def.description !== undefined && typeof def.description !== 'string') {
    sink.error('bad_type', `input "${name}": "description" must be a string`, [...path, 'description']);
  }
  if (def.required === true && def.default !== undefined) {
    sink.error('bad_input', `input "${name}" has a default, so it cannot be required`, [...path, 'required']);
  }
  if (def.secret === true && def.type !== 'string') {
    sink.error('bad_input', `secret input "${name}" must have type string (it carries a secret reference)`, [...path, 'secret']);
  }
  if (def.type === 'enum') {
    const values = def.values;
    if (values === undefined) sink.error('missing_field', `enum input "${name}" needs "values"`, path);
    else if (
      !Array.isArray(values) ||
      values.length === 0 ||
      !values.every((v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
    ) {
      sink.error('bad_input', `input "${name}": "values" must be a non-empty list of strings, numbers or booleans`, [...path, 'values']);
    } else if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length) {
      sink.error('bad_input', `input "${name}": "values" has duplicates`, [...path, 'values']);
    }
  } else if (def.values !== undefined) {
    sink.error('bad_input', `input "${name}": "values" is only for type enum`, [...path, 'values'], { key: true });
  }
  if (def.items !== undefined) {
    if (def.type !== 'array') sink.error('bad_input', `input "${name}": "items" is only for type array`, [...path, 'items'], { key: true });
    else if (!isObj(def.items)) sink.error('not_a_mapping', `input "${name}": "items" must be a mapping (a type or a JSON Schema)`, [...path, 'items']);
  }
  checkJson(sink, def.default, [...path, 'default']);
}

function checkRetry(sink: DiagnosticSink, retry: unknown, path: PathSegment[]): void {
  if (!isObj(retry)) {
    sink.error('bad_retry', `"retry" must be a mapping of ${RETRY_KEYS.join(', ')}`, path);
    return;
  }
  unknownKeys(sink, retry, RETRY_KEYS, path, 'retry');
  for (const key of RETRY_KEYS as (keyof typeof LIMITS)[]) {
    const v = retry[key];
    if (v === undefined) continue;
    const [min, max] = LIMITS[key];
    const integer = key !== 'backoff_factor';
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
      sink.error('bad_retry', `retry.${key} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(v)}`, [...path, key]);
    }
  }
}

function checkStep(sink: DiagnosticSink, step: unknown, path: PathSegment[], seen: Map<string, number>): void {
  if (!isObj(step)) {
    sink.error('not_a_mapping', `a step must be a mapping with "id" and "tool", got ${kind(step)}`, path);
    return;
  }
  unknownKeys(sink, step, STEP_KEYS, path, 'a step');
  const id = step.id;
  if (id === undefined) sink.error('missing_field', 'a step needs an "id"', path);
  else if (typeof id !== 'string') sink.error('bad_type', `step id must be a string, got ${kind(id)}`, [...path, 'id']);
  else if (!IDENTIFIER.test(id) || id.length > IDENTIFIER_MAX) {
    sink.error('bad_name', `step id "${id}" must match ${IDENTIFIER.source} (at most ${IDENTIFIER_MAX} characters)`, [...path, 'id']);
  } else if (seen.has(id)) {
    sink.error('duplicate_step', `step id "${id}" is already used by steps[${seen.get(id)}]`, [...path, 'id']);
  } else {
    seen.set(id, path[1] as number);
  }
  const tool = step.tool;
  if (tool === undefined) sink.error('missing_field', `step ${typeof id === 'string' ? `"${id}" ` : ''}needs a "tool" (ref@version)`, path);
  else if (typeof tool !== 'string') sink.error('bad_type', `"tool" must be a string ref@version, got ${kind(tool)}`, [...path, 'tool']);
  else if (!TOOL_REF.test(tool)) {
    sink.error('bad_tool_ref', `"${tool}" is not a tool reference: write namespace/name@version, e.g. core/template@1`, [...path, 'tool']);
  }
  if (step.args !== undefined && !isObj(step.args)) {
    sink.error('not_a_mapping', `"args" must be a mapping of argument names to values, got ${kind(step.args)}`, [...path, 'args']);
  }
  checkJson(sink, step.args, [...path, 'args']);
  if (step.if !== undefined && (typeof step.if !== 'string' || step.if.trim() === '')) {
    sink.error('bad_condition', `"if" must be an expression string such as "inputs.enabled == true", got ${kind(step.if)}`, [...path, 'if']);
  }
  if (step.retry !== undefined) checkRetry(sink, step.retry, [...path, 'retry']);
  if (step.optional !== undefined && typeof step.optional !== 'boolean') {
    sink.error('bad_type', `"optional" must be true or false, got ${kind(step.optional)}`, [...path, 'optional']);
  }
  if (step.timeout_ms !== undefined) {
    const t = step.timeout_ms;
    const [min, max] = LIMITS.timeout_ms;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < min || t > max) {
      sink.error('bad_timeout', `timeout_ms must be an integer from ${min} to ${max}, got ${JSON.stringify(t)}`, [...path, 'timeout_ms']);
    }
  }
}

const NON_BLOCKING = new Set(['bad_name', 'duplicate_step']);

/** Check the shape of a Flow. Returns it typed when there is no structural error. */
export function validateFlowShape(value: unknown, sink: DiagnosticSink): Flow | undefined {
  const before = sink.list.length;
  if (!isObj(value)) {
    sink.error(
      'not_a_mapping',
      value === undefined || value === null ? 'the flow is empty: expected a mapping with name and steps' : `a flow must be a mapping, got ${kind(value)}`,
      [],
    );
    return undefined;
  }
  unknownKeys(sink, value, FLOW_KEYS, [], 'the flow');
  const name = value.name;
  if (name === undefined) sink.error('missing_field', 'the flow needs a "name"', []);
  else if (typeof name !== 'string') sink.error('bad_type', `"name" must be a string, got ${kind(name)}`, ['name']);
  else if (!FLOW_NAME.test(name) || name.length > FLOW_NAME_MAX) {
    sink.error('bad_name', `flow name "${name}" must match ${FLOW_NAME.source} and be 1 to ${FLOW_NAME_MAX} characters`, ['name']);
  }
  if (value.description !== undefined && typeof value.description !== 'string') {
    sink.error('bad_type', `"description" must be a string, got ${kind(value.description)}`, ['description']);
  }
  if (value.inputs !== undefined && value.inputs !== null) {
    if (!isObj(value.inputs)) sink.error('not_a_mapping', `"inputs" must be a mapping of input names to definitions, got ${kind(value.inputs)}`, ['inputs']);
    else for (const [k, def] of Object.entries(value.inputs)) checkInput(sink, k, def, ['inputs', k]);
  }
  const steps = value.steps;
  if (steps === undefined) sink.error('missing_field', 'the flow needs "steps" (a list of at least one step)', []);
  else if (!Array.isArray(steps)) sink.error('bad_type', `"steps" must be a list, got ${kind(steps)}`, ['steps']);
  else if (steps.length === 0) sink.error('no_steps', '"steps" is empty: a flow needs at least one step', ['steps']);
  else {
    const seen = new Map<string, number>();
    steps.forEach((s, i) => checkStep(sink, s, ['steps', i], seen));
  }
  checkJson(sink, value.output, ['output']);
  // A bad name or a repeated step id leaves the flow well-typed: the reference, tool and type checks
  // still run, so one compile lists every problem. Any other shape error stops here.
  if (sink.list.slice(before).some((d) => !NON_BLOCKING.has(d.code))) return undefined;
  const flow: Flow = { name: name as string, steps: steps as FlowStep[] };
  if (value.description !== undefined) flow.description = value.description as string;
  if (isObj(value.inputs)) flow.inputs = value.inputs as Record<string, FlowInput>;
  // An empty `output:` is no output (null would project nothing useful).
  if (value.output !== undefined && value.output !== null) flow.output = value.output;
  return flow;
}
