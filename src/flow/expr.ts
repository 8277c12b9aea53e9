import { FUNCTIONS, isTruthy, jsonEquals, toText } from './expr-functions.js';
import { exprError, parseEmbedded, parseExpr, printExpr, type Expr, type PathSegment } from './expr-parser.js';

export type { Expr, PathSegment } from './expr-parser.js';
export { parseExpr, printExpr } from './expr-parser.js';
export { FUNCTIONS, isTruthy, jsonEquals, toText } from './expr-functions.js';

/**
 * Expressions in Flows: `${ expr }` inside strings of `args` and `output`, and `if:` conditions.
 *
 * - A string that is exactly one `${expr}` yields the value with its type (number, object, ...).
 * - Otherwise the string is an interpolation: each `${expr}` becomes text (strings as they are,
 *   null and missing as "", anything else as canonical JSON).
 * - `$${` is a literal `${` (so a flow can pass `${...}` text to a tool unevaluated).
 * - A reference to a missing input, step or field evaluates to null; evaluation never throws.
 */

/** What expressions read at run time. */
export interface ExprScope {
  inputs: Record<string, unknown>;
  steps: Record<string, { output?: unknown; status: 'succeeded' | 'failed' | 'skipped' }>;
}

export interface TemplateExpr {
  expr: Expr;
  /** The source text between `${` and `}`. */
  source: string;
  /** 0-based offset of `${` in the template string. */
  offset: number;
}

export interface Template {
  parts: (string | TemplateExpr)[];
  /** True when the string is exactly one `${expr}`: it evaluates to a typed value. */
  whole: boolean;
}

export interface Reference {
  kind: 'input' | 'step';
  /** The input name or the step id. */
  name: string;
  /** Segments after the name: for a step, `['output', ...]` or `['status']`. Numbers as strings. */
  path: string[];
}

/** Parse a string into literal text and `${expr}` parts. Throws FlowError('expr_syntax') with the column. */
export function parseTemplate(s: string): Template {
  const parts: (string | TemplateExpr)[] = [];
  let text = '';
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (s.startsWith('${', i)) {
      if (text) parts.push(text);
      text = '';
      const { expr, end } = parseEmbedded(s, i + 2);
      parts.push({ expr, source: s.slice(i + 2, end - 1), offset: i });
      i = end;
      continue;
    }
    text += s[i];
    i++;
  }
  if (text) parts.push(text);
  return { parts, whole: parts.length === 1 && typeof parts[0] !== 'string' };
}

/** True when a string contains at least one `${` that is not escaped as `$${`. */
export function hasExpression(s: string): boolean {
  return s.replaceAll('$${', '').includes('${');
}

function walkPath(value: unknown, path: readonly PathSegment[]): unknown {
  let cur = value;
  for (const seg of path) {
    if (cur === null || cur === undefined) return null;
    if (typeof seg === 'number') {
      if (!Array.isArray(cur)) return null;
      cur = cur[seg < 0 ? cur.length + seg : seg];
    } else if (typeof cur === 'object' && !Array.isArray(cur) && Object.hasOwn(cur, seg)) {
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return null;
    }
  }
  return cur === undefined ? null : cur;
}

function compare(op: '<' | '<=' | '>' | '>=', a: unknown, b: unknown): boolean {
  // Only numbers with numbers and strings with strings are ordered; anything else is false.
  if (!((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string'))) return false;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

/** Evaluate a parsed expression. Never throws; missing references are null. */
export function evaluateExpr(e: Expr, scope: ExprScope): unknown {
  switch (e.type) {
    case 'literal':
      return e.value;
    case 'input':
      return walkPath(Object.hasOwn(scope.inputs, e.name) ? scope.inputs[e.name] : null, e.path);
    case 'step': {
      const step = Object.hasOwn(scope.steps, e.id) ? scope.steps[e.id] : undefined;
      if (!step) return null;
      if (e.field === 'status') return step.status;
      return walkPath(step.output, e.path);
    }
    case 'call':
      return FUNCTIONS[e.name]!.call(e.args.map((a) => evaluateExpr(a, scope)));
    case 'unary': {
      const v = evaluateExpr(e.arg, scope);
      if (e.op === '!') return !isTruthy(v);
      return typeof v === 'number' ? -v : null;
    }
    case 'binary': {
      if (e.op === '&&') return isTruthy(evaluateExpr(e.left, scope)) && isTruthy(evaluateExpr(e.right, scope));
      if (e.op === '||') return isTruthy(evaluateExpr(e.left, scope)) || isTruthy(evaluateExpr(e.right, scope));
      const l = evaluateExpr(e.left, scope);
      const r = evaluateExpr(e.right, scope);
      if (e.op === '==') return jsonEquals(l, r);
      if (e.op === '!=') return !jsonEquals(l, r);
      return compare(e.op, l, r);
    }
  }
}

/** Bounded cache of parsed templates: runs evaluate the same argument strings many times. */
const templateCache = new Map<string, Template>();
const CACHE_LIMIT = 2048;

/** parseTemplate with a bounded cache: the same template strings repeat across steps and runs. */
export function parseTemplateCached(s: string): Template {
  let t = templateCache.get(s);
  if (!t) {
    t = parseTemplate(s);
    if (templateCache.size >= CACHE_LIMIT) templateCache.delete(templateCache.keys().next().value!);
    templateCache.set(s, t);
  }
  return t;
}

function evaluateString(s: string, scope: ExprScope): unknown {
  if (!s.includes('${')) return s;
  const t = parseTemplateCached(s);
  if (t.whole) return evaluateExpr((t.parts[0] as TemplateExpr).expr, scope);
  return t.parts.map((p) => (typeof p === 'string' ? p : toText(evaluateExpr(p.expr, scope)))).join('');
}

/**
 * Evaluate every string in a value (deep: objects and arrays; keys are not evaluated).
 * Throws FlowError('expr_syntax') only for a malformed expression, which compile already rejects.
 */
export function evaluateValue(value: unknown, scope: ExprScope): unknown {
  if (typeof value === 'string') return evaluateString(value, scope);
  if (Array.isArray(value)) return value.map((v) => evaluateValue(v, scope));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = evaluateValue(v, scope);
    return out;
  }
  return value;
}

/** Parse an `if:` condition: a bare expression `a == b` or one whole `${a == b}`. */
export function parseCondition(expr: string): Expr {
  if (expr.includes('${')) {
    const lead = expr.length - expr.trimStart().length;
    const t = parseTemplate(expr.trim());
    if (!t.whole) throw exprError('a condition is one expression: write "a == b" or "${a == b}"', lead);
    return (t.parts[0] as TemplateExpr).expr;
  }
  return parseExpr(expr);
}

/** Evaluate an `if:` condition to a boolean (truthiness: null, false, 0, "" and NaN are false). */
export function evaluateCondition(expr: string, scope: ExprScope): boolean {
  return isTruthy(evaluateExpr(parseCondition(expr), scope));
}

/** The canonical text of a condition (bare, no `${}`), for the FlowSpec. */
export function normalizeCondition(expr: string): string {
  return printExpr(parseCondition(expr));
}

function escapeText(s: string): string {
  return s.replaceAll('${', () => '$${');
}

/** Re-print one string with every `${expr}` in canonical form. */
export function normalizeString(s: string): string {
  if (!s.includes('${')) return s;
  return parseTemplateCached(s)
    .parts.map((p) => (typeof p === 'string' ? escapeText(p) : `\${${printExpr(p.expr)}}`))
    .join('');
}

/** Deep-walk a value re-printing every `${expr}` canonically (for the FlowSpec digest). */
export function normalizeValue(value: unknown): unknown {
  if (typeof value === 'string') return normalizeString(value);
  if (Array.isArray(value)) return value.map(normalizeValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = normalizeValue(v);
    return out;
  }
  return value;
}

/** Every input and step reference in one parsed expression, in source order. */
export function referencesOf(e: Expr, out: Reference[] = []): Reference[] {
  switch (e.type) {
    case 'input':
      out.push({ kind: 'input', name: e.name, path: e.path.map(String) });
      break;
    case 'step':
      out.push({ kind: 'step', name: e.id, path: [e.field, ...e.path.map(String)] });
      break;
    case 'call':
      e.args.forEach((a) => referencesOf(a, out));
      break;
    case 'unary':
      referencesOf(e.arg, out);
      break;
    case 'binary':
      referencesOf(e.left, out);
      referencesOf(e.right, out);
      break;
    case 'literal':
      break;
  }
  return out;
}

/** Every reference in every `${expr}` of a value (deep). Throws FlowError('expr_syntax') on a malformed one. */
export function collectReferences(value: unknown): Reference[] {
  const out: Reference[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!v.includes('${')) return;
      for (const p of parseTemplate(v).parts) if (typeof p !== 'string') referencesOf(p.expr, out);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return out;
}
