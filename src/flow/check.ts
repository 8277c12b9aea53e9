import { isFlowError } from '../errors.js';
import { validateAgainstSchema } from '../tools/contract.js';
import type { JsonSchema, ToolContract } from '../tools/types.js';
import type { DiagnosticSink, PathSegment } from './diagnostics.js';
import type { Expr } from './expr-parser.js';
import { parseCondition, parseTemplateCached } from './expr.js';
import { describeType, inferType, schemaAt, typeFits, type TypeEnv } from './static-types.js';
import type { InputContract } from './types.js';

/**
 * Semantic checks over expressions: syntax (with the column inside the string), references to inputs
 * and steps (unknown, later, self), secrets, and the static types of arguments against the tool's
 * input schema.
 */

/** Where an expression sits: in step `index`'s args or `if`, or in the flow's `output`. */
export type ExprContext = { where: 'args'; index: number; contract?: ToolContract } | { where: 'if'; index: number } | { where: 'output' };

export interface CheckEnv extends TypeEnv {
  /** Step id -> its index in `steps`. */
  stepIndex: Map<string, number>;
  sink: DiagnosticSink;
}

function visitRefs(e: Expr, cb: (node: Extract<Expr, { type: 'input' | 'step' }>) => void): void {
  switch (e.type) {
    case 'input':
    case 'step':
      cb(e);
      break;
    case 'call':
      e.args.forEach((a) => visitRefs(a, cb));
      break;
    case 'unary':
      visitRefs(e.arg, cb);
      break;
    case 'binary':
      visitRefs(e.left, cb);
      visitRefs(e.right, cb);
      break;
    case 'literal':
      break;
  }
}

/** Check the references of one parsed expression. Returns whether it reads a secret input. */
function checkRefs(expr: Expr, ctx: ExprContext, env: CheckEnv, path: PathSegment[]): boolean {
  let readsSecret = false;
  visitRefs(expr, (node) => {
    const at = { offset: node.pos };
    if (node.type === 'input') {
      const input: InputContract | undefined = env.inputs[node.name];
      if (!input) {
        const known = Object.keys(env.inputs);
        env.sink.error(
          'unknown_input',
          `unknown input "${node.name}"${known.length ? ` (inputs: ${known.join(', ')})` : ' (the flow declares no inputs)'}`,
          path,
          at,
        );
        return;
      }
      if (!input.secret) return;
      readsSecret = true;
      if (ctx.where === 'output') {
        env.sink.error(
          'secret_not_allowed',
          `secret input "${node.name}" cannot appear in the output (secret values never leave the step that uses them)`,
          path,
          at,
        );
      } else if (ctx.where === 'if') {
        env.sink.error('secret_not_allowed', `secret input "${node.name}" cannot be used in a condition`, path, at);
      } else if (ctx.contract && !ctx.contract.capabilities.includes('secrets')) {
        env.sink.error(
          'secret_not_allowed',
          `secret input "${node.name}" is passed to ${ctx.contract.ref}@${ctx.contract.version}, whose contract does not declare the "secrets" capability`,
          path,
          at,
        );
      }
      return;
    }
    const target = env.stepIndex.get(node.id);
    if (target === undefined) {
      const known = [...env.stepIndex.keys()];
      env.sink.error('unknown_step', `unknown step "${node.id}" (steps: ${known.join(', ')})`, path, at);
    } else if (ctx.where !== 'output' && target >= ctx.index) {
      env.sink.error(
        'forward_reference',
        target === ctx.index
          ? `step "${node.id}" references itself (a cycle): a step can only read earlier steps`
          : `step "${node.id}" runs later (steps[${target}]): a step can only read earlier steps`,
        path,
        at,
      );
    }
  });
  return readsSecret;
}

function syntaxError(env: CheckEnv, err: unknown, path: PathSegment[]): void {
  if (!isFlowError(err, 'expr_syntax')) throw err;
  const offset = (err.data as { offset?: number } | undefined)?.offset ?? 0;
  env.sink.error('expr_syntax', err.message.replace('[flowctl] [expr] ', '').replace(/ \(column \d+\)$/, ''), path, { offset });
}

/** Every string holding an expression in `value`, with its path relative to `value`. `stack` is the
 * current path, copied only for strings that hold an expression (most values hold none). */
function stringsWithExpressions(value: unknown, stack: PathSegment[], out: { rel: PathSegment[]; text: string }[]): typeof out {
  if (typeof value === 'string') {
    if (value.includes('${')) out.push({ rel: [...stack], text: value });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      stack.push(i);
      stringsWithExpressions(value[i], stack, out);
      stack.pop();
    }
  } else if (value !== null && typeof value === 'object') {
    for (const k in value) {
      stack.push(k);
      stringsWithExpressions((value as Record<string, unknown>)[k], stack, out);
      stack.pop();
    }
  }
  return out;
}

/**
 * Check the expressions inside a value (step args or output). Returns whether any reads a secret
 * input, and the relative paths of strings holding expressions (whose values are known only at run time).
 */
export function checkValue(value: unknown, base: PathSegment[], ctx: ExprContext, env: CheckEnv): { readsSecret: boolean; dynamic: PathSegment[][] } {
  let readsSecret = false;
  const dynamic: PathSegment[][] = [];
  for (const { rel, text } of stringsWithExpressions(value, [], [])) {
    const path = [...base, ...rel];
    let template;
    try {
      template = parseTemplateCached(text);
    } catch (err) {
      syntaxError(env, err, path);
      continue;
    }
    const exprs = template.parts.filter((p) => typeof p !== 'string');
    if (exprs.length === 0) continue; // only `$${` escapes: a literal string
    dynamic.push(rel);
    for (const part of exprs) if (checkRefs(part.expr, ctx, env, path)) readsSecret = true;
    if (ctx.where === 'args' && ctx.contract) {
      const schema = schemaAt(ctx.contract.input_schema, rel);
      const actual = template.whole ? inferType(exprs[0]!.expr, env) : new Set(['string']);
      const fit = typeFits(actual, schema);
      if (!fit.ok) {
        const what = template.whole ? `\${${exprs[0]!.source.trim()}} is ${describeType(actual)}` : 'a text interpolation is a string';
        env.sink.error('type_mismatch', `${ctx.contract.ref}@${ctx.contract.version} expects ${fit.expected} here, but ${what}`, path, {
          offset: exprs[0]!.offset,
        });
      }
    }
  }
  return { readsSecret, dynamic };
}

/** Check an `if:` condition: syntax, references (earlier steps only) and no secrets. */
export function checkCondition(condition: string, index: number, env: CheckEnv): void {
  const path = ['steps', index, 'if'];
  let expr: Expr;
  try {
    expr = parseCondition(condition);
  } catch (err) {
    syntaxError(env, err, path);
    return;
  }
  checkRefs(expr, { where: 'if', index }, env, path);
}

const isPrefix = (a: readonly PathSegment[], b: readonly PathSegment[]): boolean => a.length <= b.length && a.every((s, i) => String(s) === String(b[i]));

/** `headers.accept`, `items[0]` (the issue paths of tools/contract.ts) back to segments. */
function issueSegments(path: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

// Issues at an ancestor of a run-time value that do not depend on that value.
const STRUCTURAL =
  /^(is required|is not an allowed property|must be (object|array|string|number|integer|boolean|null)\b|must NOT have (more|fewer) than \d+ (items|properties))/;

/**
 * Validate the literal parts of a step's args against the tool's input schema. Values computed by
 * expressions (`dynamic`) are skipped, with the issues their presence could cause.
 */
export function checkLiteralArgs(args: Record<string, unknown>, dynamic: PathSegment[][], index: number, contract: ToolContract, env: CheckEnv): void {
  const { issues } = validateAgainstSchema(contract.input_schema as JsonSchema, args);
  const tool = `${contract.ref}@${contract.version}`;
  for (const issue of issues) {
    const rel = issueSegments(issue.path);
    if (dynamic.some((d) => isPrefix(d, rel))) continue;
    if (dynamic.some((d) => isPrefix(rel, d)) && !STRUCTURAL.test(issue.message)) continue;
    const path = ['steps', index, 'args', ...rel];
    const name = issue.path === '' ? 'args' : issue.path;
    if (issue.message === 'is not an allowed property') {
      const props = Object.keys((schemaAt(contract.input_schema, rel.slice(0, -1))?.properties as object | undefined) ?? {});
      env.sink.error('unknown_field', `${tool} has no argument "${name}"${props.length ? ` (arguments: ${props.join(', ')})` : ''}`, path, { key: true });
    } else if (issue.message === 'is required') {
      env.sink.error('missing_field', `${tool} needs the argument "${name}"`, path);
    } else {
      env.sink.error('type_mismatch', `${tool}: ${name} ${issue.message}`, path);
    }
  }
}
