import type { JsonSchema } from '../tools/types.js';
import { FUNCTIONS } from './expr-functions.js';
import type { Expr, PathSegment } from './expr-parser.js';
import type { InputContract } from './types.js';

/**
 * Compile-time types of expressions, as sets of JSON Schema type names. `undefined` means unknown
 * (nothing is checked). Types are optimistic: a reference that turns out missing at run time is null,
 * which the tool's own input validation reports then.
 */
export type StaticType = ReadonlySet<string> | undefined;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function schemaTypes(schema: unknown): StaticType {
  if (!isObj(schema)) return undefined;
  if (typeof schema.type === 'string') return new Set([schema.type]);
  if (Array.isArray(schema.type)) return new Set(schema.type as string[]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonType));
  if ('const' in schema) return new Set([jsonType(schema.const)]);
  return undefined;
}

/** The sub-schema at a path (properties, additionalProperties, items, prefixItems); undefined when unknown. */
export function schemaAt(schema: unknown, path: readonly PathSegment[]): JsonSchema | undefined {
  let cur: unknown = schema;
  for (const seg of path) {
    if (!isObj(cur)) return undefined;
    const key = String(seg);
    if (typeof seg === 'number' && (Array.isArray(cur.prefixItems) || isObj(cur.items))) {
      const prefix = Array.isArray(cur.prefixItems) ? cur.prefixItems[seg] : undefined;
      cur = prefix ?? cur.items;
      continue;
    }
    if (isObj(cur.properties) && Object.hasOwn(cur.properties, key)) {
      cur = cur.properties[key];
    } else if (isObj(cur.additionalProperties)) {
      cur = cur.additionalProperties;
    } else {
      return undefined;
    }
  }
  return isObj(cur) ? cur : undefined;
}

export interface TypeEnv {
  inputs: Record<string, InputContract>;
  /** Output schema of each step id, when its tool resolved. */
  stepOutputs: Record<string, JsonSchema | undefined>;
}

export function inferType(e: Expr, env: TypeEnv): StaticType {
  switch (e.type) {
    case 'literal':
      return new Set([jsonType(e.value)]);
    case 'input': {
      const input = env.inputs[e.name];
      if (!input) return undefined;
      if (e.path.length === 0) return schemaTypes(input.schema);
      return schemaTypes(schemaAt(input.schema, e.path));
    }
    case 'step':
      if (e.field === 'status') return new Set(['string']);
      return schemaTypes(schemaAt(env.stepOutputs[e.id], e.path));
    case 'call': {
      if (e.name === 'default' || e.name === 'coalesce') {
        const parts = e.args.map((a) => inferType(a, env));
        if (parts.some((p) => p === undefined)) return undefined;
        return new Set(parts.flatMap((p) => [...p!]).filter((t) => t !== 'null'));
      }
      const r = FUNCTIONS[e.name]?.returns;
      return r === undefined || r === 'any' ? undefined : new Set([r]);
    }
    case 'unary':
      return new Set([e.op === '!' ? 'boolean' : 'number']);
    case 'binary':
      return new Set(['boolean']);
  }
}

/** Whether every type an expression can have is accepted by a schema with `type`. */
export function typeFits(actual: StaticType, schema: JsonSchema | undefined): { ok: boolean; expected?: string } {
  if (!actual || actual.size === 0 || !schema) return { ok: true };
  const expected = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : undefined;
  if (!expected) return { ok: true };
  for (const t of actual) {
    if (expected.includes(t)) continue;
    if (t === 'integer' && expected.includes('number')) continue;
    return { ok: false, expected: expected.join(' or ') };
  }
  return { ok: true };
}

export function describeType(t: StaticType): string {
  return t ? [...t].join(' or ') : 'unknown';
}
