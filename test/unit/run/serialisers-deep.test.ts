import fc from 'fast-check';
import stringify from 'fast-json-stable-stringify';
import { describe, expect, it } from 'vitest';
import { canonicalJson, digestBytes, digestOf, inCanonicalForm, MAX_STORED_DEPTH, prettyJson, prettyStringify, sortKeysDeep } from '../../../src/canonical.js';
import { createLauncher } from '../../../src/launcher/launcher.js';
import { defineTool } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { makeSpec, testEngine } from '../engine/helpers.js';

// Issue 12, defect 2: "make every serialiser safe on what it accepts". canonicalJson (and so every
// digest), prettyJson (the CLI's --json) and sortKeysDeep keep their own stack, so no depth throws a
// RangeError; a step output deeper than MAX_STORED_DEPTH is refused when it is produced, so whatever
// a run stores, GET /runs/{id} and replay read back.

/** `{"b": 1, "a": {"b": 1, "a": ... }}`: unsorted keys force canonicalJson off its fast path. */
function deepUnsorted(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { b: i % 7, a: v };
  return v;
}
function deepArray(depth: number): unknown {
  let v: unknown = null;
  for (let i = 0; i < depth; i++) v = [v, i];
  return v;
}
function expectedUnsorted(depth: number): string {
  // Built from the inside out: level i (0-based from the outside) is {"a":<inner>,"b":<(depth-1-i)%7>}.
  let text = '"leaf"';
  for (let i = 0; i < depth; i++) text = `{"a":${text},"b":${i % 7}}`;
  return text;
}

describe('canonical JSON at any depth', () => {
  it('serialises 100,000 levels off the fast path without a stack overflow, with the canonical bytes', () => {
    const depth = 100_000;
    const value = deepUnsorted(depth);
    const text = canonicalJson(value);
    expect(text).toBe(expectedUnsorted(depth));
    expect(digestOf(value)).toBe(digestBytes(text));
    const form = inCanonicalForm(value);
    expect(canonicalJson(form)).toBe(text);
    let arrays = '[null,0]';
    for (let i = 1; i < depth; i++) arrays = `[${arrays},${i}]`;
    expect(canonicalJson(deepArray(depth))).toBe(arrays);
  });

  it('still gives fast-json-stable-stringify bytes where that library works (toJSON, undefined, non-finite, sorting)', () => {
    const key = fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('0', '10', '9', '__proto__', 'b', 'a', ''));
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, false, undefined, Number.NaN, -0, Infinity, () => 1),
        fc.double(),
        fc.string({ maxLength: 6 }),
        fc.date({ noInvalidDate: true }),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(key, tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, fc.integer({ min: 70, max: 120 }), (v, depth) => {
        // Wrapped deeper than the fast path's 64 levels, so the general path serialises it.
        let wrapped: unknown = v;
        for (let i = 0; i < depth; i++) wrapped = { z: 1, w: wrapped };
        expect(canonicalJson(wrapped)).toBe(stringify(wrapped));
      }),
      { seed: 0x0c4_0_1ca1, numRuns: 500 },
    );
  });

  it('reports a cycle as a TypeError, for objects and (unlike the library, which overflowed) arrays', () => {
    const obj: Record<string, unknown> = { b: 1 };
    obj.a = { loop: obj };
    expect(() => canonicalJson(obj)).toThrow(TypeError);
    const arr: unknown[] = [1];
    arr.push([arr]);
    expect(() => canonicalJson({ z: 1, a: arr })).toThrow(TypeError);
    // A value shared by siblings is not a cycle.
    const shared = { y: 2, x: 1 };
    expect(canonicalJson({ b: shared, a: [shared, shared] })).toBe('{"a":[{"x":1,"y":2},{"x":1,"y":2}],"b":{"x":1,"y":2}}');
  });
});

describe('prettyJson and sortKeysDeep at any depth', () => {
  it('prints 6,000 levels (the native serialiser runs out of stack), and the text parses back', () => {
    // Pretty text grows with the square of the depth (each line is indented), so not 100,000 here.
    const depth = 6_000;
    const value = deepUnsorted(depth);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    const text = prettyJson(value);
    expect(text.startsWith('{\n  "a": {\n    "a": {')).toBe(true);
    expect(canonicalJson(JSON.parse(text))).toBe(expectedUnsorted(depth));
    expect(canonicalJson(sortKeysDeep(value))).toBe(expectedUnsorted(depth));
    expect(canonicalJson(sortKeysDeep(deepUnsorted(100_000)))).toBe(expectedUnsorted(100_000));
  });

  it('prettyStringify prints exactly what JSON.stringify(value, null, 2) prints', () => {
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, false, undefined, Number.NaN, -0, -Infinity, () => 1, Symbol('s')),
        fc.double(),
        fc.string({ unit: 'binary', maxLength: 6 }),
        fc.date({ noInvalidDate: true }),
        fc.constant({ toJSON: (k: string) => `toJSON(${k})` }),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        expect(prettyStringify(v)).toBe(JSON.stringify(v, null, 2));
      }),
      { seed: 0x9e_77_1e, numRuns: 1000 },
    );
  });

  it('sortKeysDeep reports a cycle as a TypeError instead of looping', () => {
    const obj: Record<string, unknown> = {};
    obj.self = [obj];
    expect(() => sortKeysDeep(obj)).toThrow(TypeError);
    expect(() => prettyJson(obj)).toThrow(TypeError);
  });
});

describe('step outputs are bounded so a stored run stays readable', () => {
  function deepOutput(depth: number): unknown {
    let v: unknown = 'bottom';
    for (let i = 0; i < depth; i++) v = { a: v };
    return v;
  }

  it(`an output ${MAX_STORED_DEPTH} levels deep is stored and read back; deeper ones fail the step, structured, and the run stays readable`, async () => {
    const tool = defineTool(
      {
        ref: 'test/deep',
        version: '1.0.0',
        description: 'returns a value `depth` levels deep',
        input_schema: { type: 'object' },
        output_schema: { type: 'object' },
        capabilities: [],
      },
      async (input: { depth: number }) => ({ v: deepOutput(input.depth) }),
    );
    const registry = createToolRegistry([tool]);
    for (const depth of [MAX_STORED_DEPTH - 1, MAX_STORED_DEPTH, 3_000, 4_400, 10_000]) {
      const spec = makeSpec(registry, [{ id: 'deep', tool: 'test/deep', args: { depth } }], { name: `deep-${depth}`, output: '${steps.deep.output}' });
      const { engine } = testEngine(registry);
      const launcher = createLauncher({ engine, flows: [{ name: 'deep', spec }] });
      const res = await launcher.fetch(
        new Request('http://127.0.0.1/flows/deep/runs', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }),
      );
      expect(res.status).toBe(200);
      const run = JSON.parse(await res.text()) as { id: string; status: string; journal: Array<{ event: string; error?: { code: string; message: string } }> };
      // The tool's value is one level under {v: ...}: its output is depth + 1 deep.
      if (depth + 1 <= MAX_STORED_DEPTH) {
        expect(run.status).toBe('succeeded');
      } else {
        expect(run.status).toBe('failed');
        expect(run.journal.at(-1)).toMatchObject({
          event: 'run_finished',
          error: { code: 'output_contract_violation', message: expect.stringContaining(`nested deeper than ${MAX_STORED_DEPTH} levels`) },
        });
      }
      const got = await launcher.fetch(new Request(`http://127.0.0.1/runs/${run.id}`));
      expect(got.status).toBe(200);
      const stored = JSON.parse(await got.text()) as unknown;
      expect(canonicalJson(stored)).toBe(canonicalJson(run));
      expect(JSON.parse(prettyJson(stored))).toEqual(stored);
      const replay = await launcher.fetch(
        new Request(`http://127.0.0.1/runs/${run.id}/replay`, { method: 'POST', body: '{"mode":"verify"}', headers: { 'content-type': 'application/json' } }),
      );
      expect(replay.status).toBe(200);
      expect(((await replay.json()) as { status: string }).status).toBe(run.status);
    }
  });
});
