import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../../adapters/storage-fs/index.js';
import { canonicalJson, digestOf, prettyJson } from '../../../src/canonical.js';
import { createLauncher } from '../../../src/launcher/launcher.js';
import { isFlowError } from '../../../src/errors.js';
import { compileFlow } from '../../../src/flow/compile.js';
import { INPUT_LIMITS, inputValueIssues } from '../../../src/flow/inputs.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { resolveInputs, type InputIssue } from '../../../src/run/inputs.js';
import { makeSpec, testEngine, testTools } from '../engine/helpers.js';
import { testRegistry } from '../flow/test-tools.js';

// Issue 12, defect 2: an input nested 10,000 deep answered 500 (stack overflow while serialising);
// at 5,000 the run was stored `failed` and could not be read back. The inputs contract now bounds
// depth (64) and size (1 MiB as canonical JSON), checks without recursion, and refuses with
// `invalid_inputs` before anything is stored; every value it accepts round-trips.

const MAX = INPUT_LIMITS.maxDepth;

/** `{"a": {"a": ... 1}}` with `depth` objects, built without recursion. */
function nestedObject(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
function nestedArray(depth: number, leaf: unknown = 'x'): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}
/** The same nesting as JSON text, so the depth never meets a recursive serialiser in the test itself. */
function nestedObjectText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

const spec = {
  flowspec: 1,
  name: 'limits',
  steps: [],
  inputs: {
    obj: { type: 'object', required: false, secret: false, schema: { type: 'object' } },
    list: { type: 'array', required: false, secret: false, schema: { type: 'array' } },
    text: { type: 'string', required: false, secret: false, schema: { type: 'string' } },
    n: { type: 'number', required: false, secret: false, schema: { type: 'number' } },
  },
} as unknown as FlowSpec;

function issuesOf(given: unknown): InputIssue[] {
  try {
    resolveInputs(spec, given);
  } catch (err) {
    if (isFlowError(err, 'invalid_inputs')) return (err.data as { issues: InputIssue[] }).issues;
    throw err;
  }
  return [];
}

const DEPTH_MESSAGE = `is nested deeper than ${MAX} levels of arrays and objects (the inputs contract allows at most ${MAX})`;

describe('the inputs contract bounds depth and size', () => {
  it('accepts exactly the boundary depth and refuses one more, for objects and arrays', () => {
    expect(issuesOf({ obj: nestedObject(MAX), list: nestedArray(MAX) })).toEqual([]);
    expect(issuesOf({ obj: nestedObject(MAX + 1) })).toEqual([{ path: 'obj', message: DEPTH_MESSAGE }]);
    expect(issuesOf({ list: nestedArray(MAX + 1) })).toEqual([{ path: 'list', message: DEPTH_MESSAGE }]);
    // depth counts containers: `{}` is 1, so 64 objects around an empty array is 65.
    expect(issuesOf({ obj: nestedObject(MAX - 1, []) })).toEqual([]);
    expect(issuesOf({ obj: nestedObject(MAX, []) })).toEqual([{ path: 'obj', message: DEPTH_MESSAGE }]);
  });

  it('refuses 5,000, 10,000 and 1,000,000 levels and a cycle with invalid_inputs, without a stack overflow', () => {
    for (const depth of [5_000, 10_000, 1_000_000]) {
      expect(issuesOf({ obj: JSON.parse(nestedObjectText(depth)) })).toEqual([{ path: 'obj', message: DEPTH_MESSAGE }]);
    }
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(issuesOf({ obj: cyclic })).toEqual([{ path: 'obj', message: DEPTH_MESSAGE }]);
  });

  it('refuses inputs larger than 1 MiB as JSON, one value or all together, and a shared value counted each time', () => {
    const big = 'x'.repeat(INPUT_LIMITS.maxBytes);
    expect(issuesOf({ text: big })).toEqual([
      {
        path: 'text',
        message: `is larger than ${INPUT_LIMITS.maxBytes} bytes as JSON (the inputs contract allows at most ${INPUT_LIMITS.maxBytes} for all inputs together)`,
      },
    ]);
    // Each under the limit, together over it: refused as a whole.
    const half = 'y'.repeat(INPUT_LIMITS.maxBytes / 2);
    expect(issuesOf({ text: half, obj: { half } })).toEqual([
      { path: '', message: `the inputs are larger than ${INPUT_LIMITS.maxBytes} bytes as JSON (the inputs contract allows at most ${INPUT_LIMITS.maxBytes})` },
    ]);
    // A value shared a million times is a million copies in JSON; the walk stops early.
    const shared = { s: 'z'.repeat(64) };
    expect(issuesOf({ list: new Array(1_000_000).fill(shared) })[0]!.path).toBe('list');
    // Just under the limit passes, and its digest is the digest of its canonical JSON.
    const fits = 'w'.repeat(INPUT_LIMITS.maxBytes - '{"text":""}'.length);
    const resolved = resolveInputs(spec, { text: fits });
    expect(Buffer.byteLength(canonicalJson(resolved.inputs))).toBe(INPUT_LIMITS.maxBytes);
    expect(resolved.inputs_digest).toBe(digestOf({ text: fits }));
  });

  it('refuses what is not JSON, with the path of each offending value', () => {
    class Point {
      x = 1;
    }
    expect(
      issuesOf({
        n: Number.NaN,
        list: [1, undefined, Infinity, 2n, () => 1, Symbol('s'), new Date(0), new Point()],
        obj: { ok: 1, dropped: undefined, 'odd key': -Infinity },
      }),
    ).toEqual([
      { path: 'obj["odd key"]', message: 'is not a JSON value (-Infinity)' },
      { path: 'list[1]', message: 'is not a JSON value (undefined)' },
      { path: 'list[2]', message: 'is not a JSON value (Infinity)' },
      { path: 'list[3]', message: 'is not a JSON value (a bigint)' },
      { path: 'list[4]', message: 'is not a JSON value (a function)' },
      { path: 'list[5]', message: 'is not a JSON value (a symbol)' },
      { path: 'list[6]', message: 'is not a JSON value (an instance of Date)' },
      { path: 'list[7]', message: 'is not a JSON value (an instance of Point)' },
      { path: 'n', message: 'is not a JSON value (NaN)' },
    ]);
  });

  it('accepts U+0000 and refuses lone surrogates (values and keys): text must be well-formed Unicode', () => {
    const nul = resolveInputs(spec, { text: 'a\u0000b', obj: { 'k\u0000': ['\u0000'] } });
    expect(nul.inputs).toEqual({ text: 'a\u0000b', obj: { 'k\u0000': ['\u0000'] } });
    expect(issuesOf({ text: 'pair \ud83d\ude00 ok' })).toEqual([]);
    expect(issuesOf({ text: 'x\ud800y', obj: { 'key\udc00': 1, list: ['\udbff'] } })).toEqual([
      { path: 'obj["key\\udc00"]', message: 'is a key that is not well-formed Unicode text (a lone surrogate \\udc00 at index 3)' },
      { path: 'obj.list[0]', message: 'is not well-formed Unicode text (a lone surrogate \\udbff at index 0)' },
      { path: 'text', message: 'is not well-formed Unicode text (a lone surrogate \\ud800 at index 1)' },
    ]);
  });

  it('keeps a member named __proto__ as data through the canonical form, the digest and prettyJson', () => {
    const given = JSON.parse('{"obj":{"b":1,"__proto__":{"polluted":true}}}') as Record<string, unknown>;
    const resolved = resolveInputs(spec, given);
    const obj = resolved.inputs.obj as Record<string, unknown>;
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.keys(obj)).toEqual(['__proto__', 'b']);
    expect(canonicalJson(resolved.inputs)).toBe('{"obj":{"__proto__":{"polluted":true},"b":1}}');
    expect(resolved.inputs_digest).toBe(digestOf(given));
    expect(JSON.parse(prettyJson(given))).toEqual(given);
    expect(prettyJson(given)).toContain('"__proto__"');
  });

  it('inputValueIssues walks any value without recursion and stops early', () => {
    expect(inputValueIssues(JSON.parse(nestedObjectText(200_000)))).toEqual([{ path: '', message: DEPTH_MESSAGE }]);
    expect(inputValueIssues(nestedObject(3), { maxDepth: 3, maxBytes: 100 })).toEqual([]);
    expect(inputValueIssues(nestedObject(4), { maxDepth: 3, maxBytes: 100 })[0]!.message).toMatch(/deeper than 3 levels/);
  });

  it('a flow default deeper than the limit is a compile error (bad_input), at the default', () => {
    const tools = testRegistry();
    const flow = (def: unknown) => ({
      name: 'deep-default',
      inputs: { obj: { type: 'object', default: def } },
      steps: [{ id: 'a', tool: 'core/template@1', args: { template: 'x' } }],
    });
    expect(compileFlow(flow(nestedObject(MAX)), { file: 'flows/d.yaml', tools }).ok).toBe(true);
    const result = compileFlow(flow(nestedObject(MAX + 1)), { file: 'flows/d.yaml', tools });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.diagnostics.map((d) => [d.code, d.field, d.message])).toEqual([
      ['bad_input', 'inputs.obj.default', `input "obj": default ${DEPTH_MESSAGE}`],
    ]);
  });
});

describe('over REST: refused before anything is stored; every accepted value round-trips', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  async function launcherOnDisk() {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-limits-'));
    dirs.push(dir);
    const storage = createFsStorage({ dir });
    const { registry } = testTools();
    const flowSpec = makeSpec(registry, [{ id: 'echo', tool: 'test/echo', args: { obj: '${inputs.obj}', list: '${inputs.list}', text: '${inputs.text}' } }], {
      name: 'deep',
      inputs: { obj: { type: 'object', required: true }, list: { type: 'array', required: true }, text: { type: 'string', required: true } },
      output: '${steps.echo.output}',
    });
    const { engine } = testEngine(registry, { storage });
    const launcher = createLauncher({ engine, flows: [{ name: 'deep', spec: flowSpec }] });
    const call = (path: string, body?: string) =>
      launcher.fetch(
        new Request(`http://127.0.0.1${path}`, body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
      );
    return { storage, call };
  }

  it('answers 422 invalid_inputs for 5,000 and 10,000 levels, and stores no run', async () => {
    const { storage, call } = await launcherOnDisk();
    for (const depth of [MAX + 1, 5_000, 10_000]) {
      const res = await call('/flows/deep/runs', `{"obj":${nestedObjectText(depth)},"list":[],"text":""}`);
      expect(res.status).toBe(422);
      const body = (await res.json()) as { error: string; issues: InputIssue[] };
      expect(body.error).toBe('invalid_inputs');
      expect(body.issues).toEqual([{ path: 'obj', message: DEPTH_MESSAGE }]);
    }
    expect(await storage.runs.list()).toEqual([]);
  });

  const leaf = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom('\u0000', '\uffff', 'a', '"', '\\', '\n', '\u2028') }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  );
  const key = fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', '0', '10', '\u0000', 'a.b', ''));
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', maxDepth: 6 },
      leaf,
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(key, tie('v'), { maxKeys: 4, noNullPrototype: true }),
    ),
  })).v;
  /** A random value wrapped in arrays and objects until it is exactly `target` levels deep. */
  const atDepth = (target: number) =>
    value.map((v) => {
      let depth = 0;
      const stack: Array<[unknown, number]> = [[v, 0]];
      while (stack.length > 0) {
        const [x, d] = stack.pop()!;
        if (x !== null && typeof x === 'object') {
          depth = Math.max(depth, d + 1);
          for (const c of Object.values(x)) stack.push([c, d + 1]);
        }
      }
      let out: unknown = v;
      for (let i = depth; i < target; i++) out = i % 2 === 0 ? [out] : { wrap: out };
      return out;
    });
  // Inside `obj` or `list`, a member MAX - 1 deep makes the input exactly MAX deep.
  const boundary = atDepth(MAX - 1);

  it('round-trips every accepted value: run, GET /runs/{id}, replay verify (fast-check, fixed seed, and the boundary depth)', async () => {
    const { call } = await launcherOnDisk();
    const check = async (inputs: { obj: Record<string, unknown>; list: unknown[]; text: string }) => {
      expect(issuesOf(inputs)).toEqual([]);
      const res = await call('/flows/deep/runs', JSON.stringify(inputs));
      const text = await res.text();
      expect(res.status, text.slice(0, 300)).toBe(200);
      const run = JSON.parse(text) as { id: string; status: string; output: unknown; journal: Array<{ event: string; inputs?: unknown }> };
      expect(run.status).toBe('succeeded');
      expect(canonicalJson(run.journal[0]!.inputs)).toBe(canonicalJson(inputs));
      expect(canonicalJson(run.output)).toBe(canonicalJson(inputs));
      const got = await call(`/runs/${run.id}`);
      expect(got.status).toBe(200);
      expect(canonicalJson(JSON.parse(await got.text()))).toBe(canonicalJson(run));
      const replay = await call(`/runs/${run.id}/replay`, '{"mode":"verify"}');
      const replayed = JSON.parse(await replay.text()) as { status: string; output: unknown };
      expect(replay.status).toBe(200);
      expect(replayed.status).toBe('succeeded');
      expect(canonicalJson(replayed.output)).toBe(canonicalJson(inputs));
    };
    await check({ obj: nestedObject(MAX) as Record<string, unknown>, list: nestedArray(MAX) as unknown[], text: 'a\u0000b' });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          obj: fc.dictionary(key, value, { maxKeys: 4, noNullPrototype: true }),
          list: fc.array(fc.oneof(value, boundary), { maxLength: 3 }),
          text: fc.string({ unit: 'binary' }),
        }),
        fc.oneof(fc.constant(undefined), boundary),
        async (inputs, deep) => {
          await check(deep === undefined ? inputs : { ...inputs, obj: { ...inputs.obj, deep }, list: [...inputs.list] });
        },
      ),
      { seed: 0x1e7_12de, numRuns: 120 },
    );
  });
});
