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

/**
 * The bounds of the inputs contract (docs/flow-language.md, "Input values"): every input value nests
 * at most `maxDepth` arrays and objects (a scalar is depth 0, `{}` and `[]` depth 1, `{"a": []}`
 * depth 2), and the resolved inputs take at most `maxBytes` bytes as canonical JSON (UTF-8).
 */
export const INPUT_LIMITS: Readonly<{ maxDepth: number; maxBytes: number }> = Object.freeze({ maxDepth: 64, maxBytes: 1024 * 1024 });

/** One problem with an input value: `path` is relative to the value (`''`, `.user.name`, `[2]`). */
export interface ValueIssue {
  path: string;
  message: string;
}

/** An array or object being walked: its members are visited one at a time, so memory stays O(depth). */
interface Frame {
  node: object;
  /** The object's keys; undefined for an array. */
  keys: string[] | undefined;
  next: number;
  /** The frame's own nesting level: 1 for the value's outermost array or object. */
  depth: number;
  parent: Frame | undefined;
  /** How this container is reached from its parent: `.key`, `["odd key"]` or `[3]` (`''` at the top). */
  step: string;
}

function pathOf(frame: Frame | undefined): string {
  const steps: string[] = [];
  for (let f = frame; f !== undefined; f = f.parent) steps.push(f.step);
  return steps.reverse().join('');
}

function keyStep(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function notJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${value}`;
    case 'object': {
      if (value === null || Array.isArray(value)) return undefined;
      const proto = Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null;
      if (proto === Object.prototype || proto === null) return undefined;
      const name = proto.constructor?.name;
      return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object that is not plain';
    }
    case 'undefined':
      return 'undefined';
    default:
      return `a ${typeof value}`;
  }
}

const LONE_SURROGATE = /\p{Cs}/u;

function illFormed(text: string): string | undefined {
  const at = LONE_SURROGATE.exec(text)?.index;
  return at === undefined ? undefined : `a lone surrogate \\u${text.charCodeAt(at).toString(16)} at index ${at}`;
}

/**
 * Whether `value` is a JSON value the inputs contract accepts: null, booleans, finite numbers,
 * well-formed Unicode strings (U+0000 included; a lone surrogate is not text, RFC 7493 I-JSON),
 * arrays and plain objects of them (members set to undefined are dropped, as JSON does), at most
 * INPUT_LIMITS.maxDepth deep and at most INPUT_LIMITS.maxBytes as JSON. Iterative and bounded: a
 * value of any depth or size, or with cycles, is walked without recursion and at most about
 * maxBytes values are visited. Returns the issues found (at most one for depth or size).
 */
export function inputValueIssues(value: unknown, limits: Readonly<{ maxDepth: number; maxBytes: number }> = INPUT_LIMITS): ValueIssue[] {
  const issues: ValueIssue[] = [];
  const stack: Frame[] = [];
  // A lower bound of the value's JSON size, so an oversized (or shared, or cyclic) value stops the walk early.
  let bytes = 0;
  const visit = (v: unknown, parent: Frame | undefined, step: string, level: number): 'depth' | 'size' | undefined => {
    const why = notJson(v);
    if (why !== undefined) {
      issues.push({ path: pathOf(parent) + step, message: `is not a JSON value (${why})` });
      return undefined;
    }
    if (typeof v === 'string') {
      bytes += v.length + 2;
      const bad = illFormed(v);
      if (bad !== undefined) issues.push({ path: pathOf(parent) + step, message: `is not well-formed Unicode text (${bad})` });
    } else if (v !== null && typeof v === 'object') {
      if (level + 1 > limits.maxDepth) return 'depth';
      bytes += 2;
      let keys: string[] | undefined;
      if (!Array.isArray(v)) {
        keys = Object.keys(v);
        const here = pathOf(parent) + step;
        for (const key of keys) {
          bytes += key.length + 4;
          if (bytes > limits.maxBytes) return 'size';
          const bad = illFormed(key);
          if (bad !== undefined) issues.push({ path: here + keyStep(key), message: `is a key that is not well-formed Unicode text (${bad})` });
        }
      }
      stack.push({ node: v, keys, next: 0, depth: level + 1, parent, step });
    } else {
      bytes += 1;
    }
    return bytes > limits.maxBytes ? 'size' : undefined;
  };
  let stop = visit(value, undefined, '', 0);
  while (stop === undefined && stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const length = frame.keys ? frame.keys.length : (frame.node as unknown[]).length;
    if (frame.next >= length) {
      stack.pop();
      continue;
    }
    const at = frame.next++;
    if (frame.keys) {
      const key = frame.keys[at]!;
      const member = (frame.node as Record<string, unknown>)[key];
      // A member set to undefined is dropped, as JSON does.
      if (member !== undefined) stop = visit(member, frame, keyStep(key), frame.depth);
    } else {
      bytes += 1;
      stop = visit((frame.node as unknown[])[at], frame, `[${at}]`, frame.depth);
    }
  }
  if (stop === 'depth') {
    return [
      { path: '', message: `is nested deeper than ${limits.maxDepth} levels of arrays and objects (the inputs contract allows at most ${limits.maxDepth})` },
    ];
  }
  if (stop === 'size') {
    return [
      { path: '', message: `is larger than ${limits.maxBytes} bytes as JSON (the inputs contract allows at most ${limits.maxBytes} for all inputs together)` },
    ];
  }
  return issues;
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
      const bounds = inputValueIssues(def.default);
      if (bounds.length > 0) {
        const why = bounds.map((i) => (i.path ? `${i.path.replace(/^\./, '')} ${i.message}` : i.message)).join('; ');
        sink.error('bad_input', `input "${name}": default ${why}`, ['inputs', name, 'default']);
        out[name] = contract;
        continue;
      }
      const check = validateAgainstSchema(schema, def.default);
      if (!check.ok) {
        const why = def.secret
          ? 'a secret default must be a reference like "secret:<name>", never a value'
          : def.type === 'enum'
            ? `must be one of ${(def.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`
            : formatIssues(check.issues);
        sink.error(
          def.secret ? 'secret_not_allowed' : 'type_mismatch',
          `input "${name}": default ${JSON.stringify(def.default)} does not fit type ${def.type}: ${why}`,
          ['inputs', name, 'default'],
        );
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
