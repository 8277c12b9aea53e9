import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isFlowError } from '../../../src/errors.js';
import {
  collectReferences,
  evaluateCondition,
  evaluateValue,
  normalizeCondition,
  normalizeValue,
  parseExpr,
  parseTemplate,
  printExpr,
  type ExprScope,
} from '../../../src/flow/expr.js';

const scope: ExprScope = {
  inputs: { name: 'Ada', n: 3, tags: ['a', 'b'], cfg: { deep: { x: 1 } }, empty: '', flag: true, zero: 0 },
  steps: {
    fetch: { status: 'succeeded', output: { body: { items: [{ id: 7 }, { id: 8 }] }, code: 200, text: 'Hello World' } },
    'fetch-page': { status: 'succeeded', output: 'page' },
    skipped: { status: 'skipped' },
  },
};

function syntaxColumn(fn: () => unknown): number {
  try {
    fn();
  } catch (err) {
    if (isFlowError(err, 'expr_syntax')) return (err.data as { column: number }).column;
    throw err;
  }
  throw new Error('expected expr_syntax');
}

describe('evaluateValue', () => {
  it('a whole ${expr} keeps the type of the value', () => {
    expect(evaluateValue('${inputs.n}', scope)).toBe(3);
    expect(evaluateValue('${inputs.tags}', scope)).toEqual(['a', 'b']);
    expect(evaluateValue('${inputs.cfg.deep}', scope)).toEqual({ x: 1 });
    expect(evaluateValue('${steps.fetch.output.body.items[1].id}', scope)).toBe(8);
    expect(evaluateValue('${ inputs.flag }', scope)).toBe(true);
  });

  it('interpolates text, JSON for non-strings and "" for null', () => {
    expect(evaluateValue('Hi ${inputs.name}, n=${inputs.n}', scope)).toBe('Hi Ada, n=3');
    expect(evaluateValue('tags=${inputs.tags}', scope)).toBe('tags=["a","b"]');
    expect(evaluateValue('cfg=${inputs.cfg}', scope)).toBe('cfg={"deep":{"x":1}}');
    expect(evaluateValue('[${inputs.missing}]', scope)).toBe('[]');
  });

  it('deep-walks objects and arrays, leaving keys alone', () => {
    expect(evaluateValue({ '${inputs.name}': ['${inputs.n}', { y: 'x${inputs.n}' }], k: 1, z: null }, scope)).toEqual({
      '${inputs.name}': [3, { y: 'x3' }],
      k: 1,
      z: null,
    });
  });

  it('missing references are null, never a throw', () => {
    expect(evaluateValue('${inputs.nope}', scope)).toBeNull();
    expect(evaluateValue('${inputs.name.deeper.still}', scope)).toBeNull();
    expect(evaluateValue('${steps.absent.output.x}', scope)).toBeNull();
    expect(evaluateValue('${steps.skipped.output.x}', scope)).toBeNull();
    expect(evaluateValue('${steps.fetch.output.body.items[9]}', scope)).toBeNull();
    expect(evaluateValue('${inputs.cfg.constructor}', scope)).toBeNull();
    expect(evaluateValue("${inputs.cfg['__proto__']}", scope)).toBeNull();
  });

  it('reads step status and hyphenated step ids', () => {
    expect(evaluateValue('${steps.fetch.status}', scope)).toBe('succeeded');
    expect(evaluateValue('${steps.skipped.status}', scope)).toBe('skipped');
    expect(evaluateValue('${steps.fetch-page.output}', scope)).toBe('page');
    expect(evaluateValue("${steps['fetch-page'].output}", scope)).toBe('page');
  });

  it('$${ is a literal ${', () => {
    expect(evaluateValue('cost: $${inputs.n}', scope)).toBe('cost: ${inputs.n}');
    expect(evaluateValue('$${x} ${inputs.n}', scope)).toBe('${x} 3');
  });

  it('leaves strings without expressions and non-strings untouched', () => {
    expect(evaluateValue('plain $ { text }', scope)).toBe('plain $ { text }');
    expect(evaluateValue(42, scope)).toBe(42);
    expect(evaluateValue(null, scope)).toBeNull();
  });
});

describe('operators', () => {
  const ev = (e: string) => evaluateValue(`\${${e}}`, scope);
  it('compares structurally and orders numbers and strings only', () => {
    expect(ev("inputs.name == 'Ada'")).toBe(true);
    expect(ev('inputs.name == "Ada"')).toBe(true);
    expect(ev("inputs.tags == split('a,b', ',')")).toBe(true);
    expect(ev('inputs.n != 3')).toBe(false);
    expect(ev('inputs.n < 4 && inputs.n <= 3 && inputs.n > 2 && inputs.n >= 3')).toBe(true);
    expect(ev("'a' < 'b'")).toBe(true);
    expect(ev("inputs.n < '4'")).toBe(false);
    expect(ev('inputs.missing == null')).toBe(true);
  });
  it('boolean operators use truthiness and precedence', () => {
    expect(ev('!inputs.empty')).toBe(true);
    expect(ev('!inputs.zero')).toBe(true);
    expect(ev('inputs.flag || inputs.missing')).toBe(true);
    expect(ev('false || true && false')).toBe(false);
    expect(ev('(false || true) && true')).toBe(true);
    expect(ev('!(inputs.n == 3)')).toBe(false);
    expect(ev('-inputs.n < 0')).toBe(true);
    expect(ev('-2.5e1')).toBe(-25);
  });
});

describe('functions', () => {
  const ev = (e: string) => evaluateValue(`\${${e}}`, scope);
  it('are pure and total', () => {
    expect(ev('len(inputs.tags)')).toBe(2);
    expect(ev('len(inputs.name)')).toBe(3);
    expect(ev('len(inputs.cfg)')).toBe(1);
    expect(ev('len(inputs.missing)')).toBe(0);
    expect(ev('lower(inputs.name)')).toBe('ada');
    expect(ev('upper(inputs.name)')).toBe('ADA');
    expect(ev("trim('  x ')")).toBe('x');
    expect(ev("join(inputs.tags, '+')")).toBe('a+b');
    expect(ev('join(inputs.tags)')).toBe('a,b');
    expect(ev("split('a-b-c', '-')")).toEqual(['a', 'b', 'c']);
    expect(ev('json(inputs.cfg)')).toBe('{"deep":{"x":1}}');
    expect(ev("default(inputs.missing, 'fallback')")).toBe('fallback');
    expect(ev("default(inputs.empty, 'fallback')")).toBe('');
    expect(ev('coalesce(inputs.missing, null, inputs.n)')).toBe(3);
    expect(ev("contains(inputs.tags, 'b')")).toBe(true);
    expect(ev("contains(steps.fetch.output.text, 'World')")).toBe(true);
    expect(ev("contains(inputs.cfg, 'deep')")).toBe(true);
    expect(ev("startsWith(steps.fetch.output.text, 'Hello')")).toBe(true);
    expect(ev("endsWith(steps.fetch.output.text, 'Hello')")).toBe(false);
    expect(ev("number('12.5')")).toBe(12.5);
    expect(ev("number('x')")).toBeNull();
    expect(ev('string(inputs.n)')).toBe('3');
    expect(ev("at(split('a b c', ' '), -1)")).toBe('c');
    expect(ev('at(inputs.tags, 5)')).toBeNull();
    expect(ev("at(inputs.cfg, 'deep')")).toEqual({ x: 1 });
    expect(ev("at(inputs.cfg, 'toString')")).toBeNull();
  });
});

describe('evaluateCondition', () => {
  it('accepts a bare expression or one whole ${}', () => {
    expect(evaluateCondition("inputs.name == 'Ada'", scope)).toBe(true);
    expect(evaluateCondition("${inputs.name == 'Bob'}", scope)).toBe(false);
    expect(evaluateCondition("steps.fetch.status == 'succeeded'", scope)).toBe(true);
    expect(evaluateCondition('inputs.missing', scope)).toBe(false);
    expect(evaluateCondition('inputs.tags', scope)).toBe(true);
  });
  it('rejects a condition mixing text and ${}', () => {
    expect(() => evaluateCondition('x ${inputs.n}', scope)).toThrow(/condition is one expression/);
  });
});

describe('syntax errors carry the column', () => {
  it.each([
    ['inputs.', 8],
    ['inputs.n ==', 12],
    ['inputs.n === 1', 12],
    ['foo.bar', 1],
    ['nope(1)', 1],
    ['len(1, 2)', 1],
    ["'unterminated", 1],
    ['steps.a.result', 1],
    ['steps.a.status.x', 1],
    ['inputs.a[x]', 10],
    ['(inputs.a', 10],
    ['inputs.a @ 1', 10],
    ['', 1],
  ])('%s -> column %i', (src, column) => {
    expect(syntaxColumn(() => parseExpr(src))).toBe(column);
  });

  it('columns in templates count from the start of the string', () => {
    expect(syntaxColumn(() => parseTemplate('hello ${inputs.}'))).toBe(16);
    expect(syntaxColumn(() => parseTemplate('hello ${inputs.a'))).toBe(7);
  });
});

describe('parseTemplate / collectReferences', () => {
  it('splits text and expressions and detects whole expressions', () => {
    const t = parseTemplate('a ${inputs.x} b');
    expect(t.whole).toBe(false);
    expect(t.parts).toHaveLength(3);
    expect(parseTemplate('${inputs.x}').whole).toBe(true);
    expect(parseTemplate(' ${inputs.x}').whole).toBe(false);
    expect(parseTemplate("${join(inputs.t, '}')}").whole).toBe(true);
  });

  it('finds input and step references with their paths', () => {
    const refs = collectReferences({
      a: '${inputs.user.name} and ${steps.fetch.output.items[0].id}',
      b: ["${steps.fetch.status == 'succeeded' && len(inputs.tags) > 0}"],
      c: 'no refs $${inputs.hidden}',
    });
    expect(refs).toEqual([
      { kind: 'input', name: 'user', path: ['name'] },
      { kind: 'step', name: 'fetch', path: ['output', 'items', '0', 'id'] },
      { kind: 'step', name: 'fetch', path: ['status'] },
      { kind: 'input', name: 'tags', path: [] },
    ]);
  });
});

describe('normalizeValue', () => {
  it('prints every expression canonically', () => {
    expect(normalizeValue({ a: '${  inputs.a==( "x" ) }', b: ['x ${ (inputs.b) } $${lit}'] })).toEqual({
      a: "${inputs.a == 'x'}",
      b: ['x ${inputs.b} $${lit}'],
    });
    expect(normalizeCondition('${ (inputs.a || inputs.b) && !(inputs.c) }')).toBe('(inputs.a || inputs.b) && !inputs.c');
    expect(normalizeCondition("inputs['a'].b[0]")).toBe('inputs.a.b[0]');
    expect(normalizeCondition("inputs['a b']")).toBe("inputs['a b']");
    expect(normalizeCondition('a == (b == c)'.replaceAll(/[abc]/g, (m) => `inputs.${m}`))).toBe('inputs.a == (inputs.b == inputs.c)');
  });

  it('different expressions normalize differently', () => {
    expect(normalizeValue('${inputs.a}')).not.toEqual(normalizeValue('${inputs.b}'));
    expect(normalizeCondition('(inputs.a || inputs.b) && inputs.c')).not.toEqual(normalizeCondition('inputs.a || inputs.b && inputs.c'));
  });

  it('printing is a fixed point and preserves meaning (property)', () => {
    const leaf = fc.oneof(
      fc.constantFrom('inputs.a', 'inputs.b.c', 'inputs.t[1]', 'steps.s.output.x', 'steps.s.status', 'true', 'null', "'q'"),
      fc.integer({ min: -5, max: 5 }).map(String),
      fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s)),
    );
    const expr = fc.letrec<{ e: string }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(tie('e'), fc.constantFrom('==', '!=', '<', '<=', '>', '>=', '&&', '||'), tie('e')).map(([l, op, r]) => `(${l}) ${op} (${r})`),
        tie('e').map((e) => `!(${e})`),
        tie('e').map((e) => `len(${e})`),
        fc.tuple(tie('e'), tie('e')).map(([a, b]) => `default(${a}, ${b})`),
      ),
    })).e;
    const sc: ExprScope = { inputs: { a: 2, b: { c: 'x' }, t: [1, 'q'] }, steps: { s: { status: 'succeeded', output: { x: 2 } } } };
    fc.assert(
      fc.property(expr, (src) => {
        const once = printExpr(parseExpr(src));
        expect(printExpr(parseExpr(once))).toBe(once);
        expect(evaluateValue(`\${${once}}`, sc)).toEqual(evaluateValue(`\${${src}}`, sc));
      }),
      { numRuns: 300 },
    );
  });
});
