import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as browser from '../../../adapters/executor-playwright/contracts.js';
import { canonicalJson } from '../../../src/canonical.js';
import { builtinTools } from '../../../src/tools/builtins/list.js';
import { validateAgainstSchema } from '../../../src/tools/contract.js';
import { TOOL_VALIDATORS } from '../../../src/tools/tool-validators.generated.js';
import type { JsonSchema, ToolContract } from '../../../src/tools/types.js';

/** Ajv as contract.ts compiles a schema at run time: what each generated validator must equal. */
const reference = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });

const browserContracts = Object.entries(browser)
  .filter(([name]) => name.startsWith('BROWSER_CONTRACTS'))
  .flatMap(([, byName]) => Object.values(byName as Record<string, ToolContract>));
const contracts: ToolContract[] = [...builtinTools().map((t) => t.contract), ...browserContracts];
const schemas = new Map<string, JsonSchema>();
for (const c of contracts) for (const s of [c.input_schema, c.output_schema]) schemas.set(canonicalJson(s), s);

type Schema = Record<string, any>;
const CAP = 40;
/** Values of the wrong shape for any member: each breaks some type, bound or enum. */
const WRONG: unknown[] = [null, -1, 1.5, 0, '', 'x', true, [], [1], {}, { x: 1 }];

/** Values meant to satisfy `s` (a few per branch and optional member), not guaranteed to: Ajv decides. */
function examples(s: Schema | boolean | undefined, depth = 0): unknown[] {
  if (s === undefined || s === true) return ['x', 1];
  if (s === false || depth > 6) return [null];
  if ('const' in s) return [s.const];
  if (Array.isArray(s.enum)) return s.enum;
  const branches: Schema[] | undefined = s.oneOf ?? s.anyOf;
  if (branches) {
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    return branches.flatMap((b) => examples({ ...rest, ...b, required: [...(rest.required ?? []), ...(b.required ?? [])] }, depth + 1)).slice(0, CAP);
  }
  const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties ? 'object' : undefined));
  switch (type) {
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {};
      const base: Record<string, unknown> = {};
      for (const k of s.required ?? []) base[k] = examples(props[k], depth + 1)[0];
      const out: unknown[] = [base];
      for (const [k, p] of Object.entries(props)) for (const v of examples(p, depth + 1).slice(0, 4)) out.push({ ...base, [k]: v });
      return out.slice(0, CAP);
    }
    case 'array': {
      const items = examples(s.items, depth + 1);
      const min = s.minItems ?? 0;
      return [Array.from({ length: Math.max(min, 1) }, (_, i) => items[i % items.length]), ...(min === 0 ? [[]] : [])];
    }
    case 'string':
      if (typeof s.pattern === 'string') return fc.sample(fc.stringMatching(new RegExp(s.pattern, 'u')), { numRuns: 2, seed: 7 });
      return ['x'.repeat(Math.max(1, s.minLength ?? 1))];
    case 'integer':
    case 'number':
      return [s.minimum ?? 1];
    case 'boolean':
      return [true, false];
    case 'null':
      return [null];
    default:
      return ['x', 1, {}];
  }
}

/** Examples, each member of each broken in turn, an unknown member, and random values (seeded). */
function samples(schema: Schema): unknown[] {
  const good = examples(schema);
  const out: unknown[] = [...good, ...WRONG];
  for (const value of good.slice(0, 8)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    const obj = value as Record<string, unknown>;
    out.push({ ...obj, zz_unknown: 1 });
    for (const k of Object.keys(schema.properties ?? {})) {
      const { [k]: _, ...without } = obj;
      out.push(without);
      for (const w of WRONG) out.push({ ...obj, [k]: w });
    }
  }
  const keys = Object.keys(schema.properties ?? {});
  const member = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...good, ...WRONG));
  const record = fc.record(Object.fromEntries(keys.map((k) => [k, member])), { requiredKeys: [] });
  out.push(...fc.sample(record, { numRuns: 60, seed: 42 }));
  return out;
}

describe('generated validators of the tool contract schemas', () => {
  it('tool-validators.generated.ts is fresh', () => {
    const root = resolve(import.meta.dirname, '../../..');
    const r = spawnSync(process.execPath, ['scripts/build-tool-validators.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('has one validator for each distinct input and output schema of the built-in and browser tools', () => {
    expect(browserContracts.length).toBeGreaterThan(10);
    expect([...TOOL_VALIDATORS.keys()].sort()).toEqual([...schemas.keys()].sort());
  });

  it('accepts and rejects what Ajv does, with the same errors', () => {
    for (const [key, schema] of schemas) {
      const generated = TOOL_VALIDATORS.get(key)!;
      const compiled = reference.compile(schema);
      let valid = 0;
      let invalid = 0;
      for (const value of samples(schema as Schema)) {
        const expected = compiled(value);
        expect(generated(value), `${key}\n${JSON.stringify(value)}`).toBe(expected);
        expect(generated.errors, `${key}\n${JSON.stringify(value)}`).toEqual(compiled.errors);
        expected ? valid++ : invalid++;
      }
      // The samples reach both sides of every schema, so the errors compared are not only "must be object".
      expect(valid, key).toBeGreaterThan(0);
      expect(invalid, key).toBeGreaterThan(10);
    }
  });

  it('validateAgainstSchema reports the same issues through a generated validator', () => {
    const navigate = browser.BROWSER_CONTRACTS.navigate.input_schema;
    expect(TOOL_VALIDATORS.has(canonicalJson(navigate))).toBe(true);
    expect(validateAgainstSchema(navigate, { url: '', extra: 1 })).toEqual({
      ok: false,
      issues: [
        { path: 'extra', message: 'is not an allowed property' },
        { path: 'url', message: 'must NOT have fewer than 1 characters' },
      ],
    });
    expect(validateAgainstSchema(structuredClone(navigate), { url: 'https://example.com' })).toEqual({ ok: true, issues: [] });
  });
});
