import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { compile, type CompileResult } from '../../../src/flow/compile.js';
import { emitYaml } from '../../../src/flow/emit.js';
import { testRegistry } from './test-tools.js';

/**
 * Property tests over generated flows: formatting and key order never change the digest; emitting
 * canonical YAML and compiling it is a fixed point; any single semantic mutation changes the digest.
 */
const tools = testRegistry();
type Obj = Record<string, any>;

function ok(result: CompileResult, src: string) {
  if (!result.ok) throw new Error(`compile failed:\n${JSON.stringify(result.diagnostics, null, 2)}\n---\n${src}`);
  return result;
}

const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/);
const text = fc.string({ maxLength: 12 }).filter((s) => !s.includes('$'));
const scalar = fc.oneof(
  text,
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.boolean(),
  fc.constant(null),
);
const json = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { maxKeys: 3 })),
})).v;

const INPUTS: Record<string, { type: string; value: fc.Arbitrary<unknown> }> = {
  name: { type: 'string', value: text },
  count: { type: 'integer', value: fc.integer({ min: 0, max: 99 }) },
  ratio: { type: 'number', value: fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 1 }) },
  loud: { type: 'boolean', value: fc.boolean() },
};

const arbInputs = fc.subarray(Object.keys(INPUTS), { minLength: 1 }).chain((names) =>
  fc.tuple(...names.map((n) => fc.record({ def: fc.option(INPUTS[n]!.value, { nil: undefined }), desc: fc.option(text, { nil: undefined }) }))).map((defs) =>
    Object.fromEntries(
      names.map((n, i) => {
        const input: Obj = { type: INPUTS[n]!.type };
        if (defs[i]!.def !== undefined) input.default = defs[i]!.def;
        if (defs[i]!.desc !== undefined) input.description = defs[i]!.desc;
        return [n, input];
      }),
    ),
  ),
);

/** A flow whose expressions only read declared inputs and earlier steps. */
const arbFlow = fc
  .record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    description: fc.option(text, { nil: undefined }),
    inputs: arbInputs,
    steps: fc.array(
      fc.record({
        kind: fc.constantFrom('transform', 'template', 'versioned'),
        literal: json,
        n: fc.integer({ min: 0, max: 50 }),
        ref: fc.nat(),
        cond: fc.option(fc.nat(), { nil: undefined }),
        retry: fc.option(fc.record({ max_attempts: fc.integer({ min: 1, max: 5 }), backoff_ms: fc.integer({ min: 0, max: 1000 }) }), { nil: undefined }),
        timeout: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
    output: fc.boolean(),
  })
  .map((g) => {
    const inputNames = Object.keys(g.inputs);
    const steps = g.steps.map((s, i) => {
      const step: Obj = { id: `s${i}` };
      const readInput = `\${inputs.${inputNames[s.ref % inputNames.length]}}`;
      const readStep = i > 0 ? `\${steps.s${s.ref % i}.output}` : readInput;
      if (s.kind === 'transform') {
        step.tool = 'core/transform@1';
        step.args = { value: { literal: s.literal, computed: s.ref % 2 ? readStep : readInput } };
      } else if (s.kind === 'template') {
        step.tool = 'core/template@1';
        step.args = { template: `t{{ v }}${s.n}`, values: { v: readInput } };
      } else {
        step.tool = `test/versioned@${s.n % 2 ? '1' : '1.2'}`;
        step.args = { n: s.n };
      }
      if (s.cond !== undefined) step.if = i > 0 ? `steps.s${s.cond % i}.status == 'succeeded'` : `inputs.${inputNames[0]} != null`;
      if (s.retry) step.retry = s.retry;
      if (s.timeout !== undefined) step.timeout_ms = s.timeout;
      return step;
    });
    const flow: Obj = { name: g.name, inputs: g.inputs, steps };
    if (g.description !== undefined) flow.description = g.description;
    if (g.output) flow.output = { last: `\${steps.s${steps.length - 1}.output}` };
    return flow;
  });

/** Deterministic shuffle of every mapping's keys (test-only PRNG seeded by fast-check). */
function shuffleKeys(value: unknown, seed: { s: number }): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    seed.s = (seed.s * 1103515245 + 12345) % 2147483648;
    const j = seed.s % (i + 1);
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return Object.fromEntries(keys.map((k) => [k, shuffleKeys((value as Obj)[k], seed)]));
}

/** Extra spaces and parentheses inside every expression: `${ (x) }` means `${x}`. */
function respace(value: unknown): any {
  if (typeof value === 'string') return value.replace(/\$\{([^}]*)\}/g, (_m, e: string) => `\${ (${e}) }`);
  if (Array.isArray(value)) return value.map(respace);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, respace(v)]));
}

const arbFormat = fc.record({
  seed: fc.nat(),
  style: fc.constantFrom('block', 'flow', 'json', 'json-pretty'),
  indent: fc.constantFrom(2, 4),
  quotes: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE') as fc.Arbitrary<'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE'>,
  comment: fc.boolean(),
  spaced: fc.boolean(),
});

interface Format {
  seed: number;
  style: string;
  indent: number;
  quotes: 'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE';
  comment: boolean;
  spaced: boolean;
}

function render(flow: Obj, f: Format): string {
  const shuffled = shuffleKeys(f.spaced ? respace(flow) : flow, { s: f.seed + 1 });
  let out: string;
  if (f.style === 'json') out = JSON.stringify(shuffled);
  else if (f.style === 'json-pretty') out = JSON.stringify(shuffled, null, f.indent);
  else out = stringify(shuffled, { indent: f.indent, defaultStringType: f.quotes, collectionStyle: f.style === 'flow' ? 'flow' : 'block', lineWidth: 0 });
  return f.comment ? `# generated flow\n${out}\n# end\n` : out;
}

const compileText = (src: string) => ok(compile(src, { file: 'gen.yaml', tools }), src);

describe('digest properties', () => {
  it('key order and formatting never change the digest', () => {
    fc.assert(
      fc.property(arbFlow, arbFormat, arbFormat, (flow, f1, f2) => {
        const a = compileText(render(flow, f1));
        const b = compileText(render(flow, f2));
        expect(b.flow_digest).toBe(a.flow_digest);
      }),
      { numRuns: 150 },
    );
  });

  it('emit yaml then compile is a fixed point', () => {
    fc.assert(
      fc.property(arbFlow, arbFormat, (flow, f) => {
        const first = compileText(render(flow, f));
        for (const refs of [undefined, first.flow.steps.map((s) => s.tool)]) {
          const yaml = emitYaml(first.spec, { toolRefs: refs });
          const second = compileText(yaml);
          expect(second.flow_digest).toBe(first.flow_digest);
          expect(emitYaml(second.spec, { toolRefs: refs })).toBe(yaml);
        }
      }),
      { numRuns: 150 },
    );
  });

  const MUTATIONS: [string, (f: Obj, k: number) => void][] = [
    ['rename the flow', (f) => (f.name = `${f.name}-x`)],
    ['change a description', (f) => (f.description = `${f.description ?? ''}!`)],
    ['change a timeout', (f, k) => (f.steps[k].timeout_ms = (f.steps[k].timeout_ms ?? 30_000) + 1)],
    ['change max_attempts', (f, k) => (f.steps[k].retry = { ...f.steps[k].retry, max_attempts: ((f.steps[k].retry?.max_attempts ?? 1) % 5) + 1 })],
    ['change backoff_factor', (f, k) => (f.steps[k].retry = { ...f.steps[k].retry, backoff_factor: 3 })],
    ['add a condition', (f, k) => (f.steps[k].if = f.steps[k].if ? `!(${f.steps[k].if})` : 'true')],
    [
      'change a literal argument',
      (f, k) => {
        const s = f.steps[k];
        if (s.tool.startsWith('core/transform')) s.args.value = { wrapped: s.args.value };
        else if (s.tool.startsWith('core/template')) s.args.template += '.';
        else s.args.n += 1;
      },
    ],
    [
      'change an expression',
      (f, k) => {
        const s = f.steps[k];
        if (s.tool.startsWith('test/versioned')) s.args.n = `\${len('${'x'.repeat(s.args.n + 1)}')}`;
        else if (s.tool.startsWith('core/template')) s.args.values.v = `\${lower(${s.args.values.v.slice(2, -1)})}`;
        else s.args.value.computed = `\${json(${s.args.value.computed.slice(2, -1)})}`;
      },
    ],
    ['append a step', (f) => f.steps.push({ id: 'extra', tool: 'core/transform@1', args: { value: 1 } })],
    [
      'rename a step',
      (f) => {
        const last = f.steps[f.steps.length - 1];
        const old = last.id;
        last.id = `${old}x`;
        if (f.output) f.output = { last: `\${steps.${last.id}.output}` };
      },
    ],
    ['add an input', (f) => (f.inputs.extra_input = { type: 'string', required: false })],
    [
      'toggle an input default',
      (f) => {
        const [name, def] = Object.entries(f.inputs as Record<string, Obj>)[0]!;
        if (def.default === undefined) def.default = INPUTS[name]!.type === 'string' ? 'd' : INPUTS[name]!.type === 'boolean' ? true : 1;
        else delete def.default;
      },
    ],
    ['change the output', (f) => (f.output = f.output ? { ...f.output, more: 1 } : { more: 1 })],
    [
      'pin another tool version',
      (f, k) => {
        const s = f.steps[k];
        if (s.tool.startsWith('test/versioned')) s.tool = s.tool.endsWith('@1') ? 'test/versioned@1.2' : 'test/versioned@1';
        else s.timeout_ms = 12_345;
      },
    ],
  ];

  it('any single semantic mutation changes the digest', () => {
    fc.assert(
      fc.property(arbFlow, fc.nat(MUTATIONS.length - 1), fc.nat(), (flow, m, k) => {
        const base = compileText(JSON.stringify(flow));
        const mutated = structuredClone(flow);
        MUTATIONS[m]![1](mutated, k % mutated.steps.length);
        const changed = compileText(JSON.stringify(mutated));
        expect(changed.flow_digest, MUTATIONS[m]![0]).not.toBe(base.flow_digest);
      }),
      { numRuns: 300 },
    );
  });
});
