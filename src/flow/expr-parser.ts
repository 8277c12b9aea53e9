import { FlowError } from '../errors.js';
import { FUNCTIONS } from './expr-functions.js';

/**
 * The expression language of Flows (see docs/flow-language.md, "Expressions"): a hand-written
 * tokenizer and a Pratt parser. Paths are static (`inputs.a.b[0]`, `steps.<id>.output.x`,
 * `steps.<id>.status`) so every reference is known at compile time.
 */

export type PathSegment = string | number;

export type Expr =
  | { type: 'literal'; value: string | number | boolean | null }
  | { type: 'input'; name: string; path: PathSegment[]; pos: number }
  | { type: 'step'; id: string; field: 'output' | 'status'; path: PathSegment[]; pos: number }
  | { type: 'call'; name: string; args: Expr[]; pos: number }
  | { type: 'unary'; op: '!' | '-'; arg: Expr }
  | { type: 'binary'; op: BinaryOp; left: Expr; right: Expr };

export type BinaryOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

type TokenKind = 'num' | 'str' | 'ident' | 'punct' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  value?: string | number;
  /** 0-based offset in the source string. */
  pos: number;
}

const PUNCT = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')', '[', ']', '.', ',', '-', '}'];
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_-]/;
const NUMBER = /^(?:\d+(?:\.\d+)?)(?:[eE][+-]?\d+)?/;

/** FlowError('expr_syntax') with the 1-based column in `data.column` (relative to the source string). */
export function exprError(message: string, pos: number): FlowError {
  return new FlowError('expr_syntax', `[flowctl] [expr] ${message} (column ${pos + 1})`, {
    data: { column: pos + 1, offset: pos },
  });
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };

function readString(src: string, start: number): { value: string; end: number } {
  const quote = src[start];
  let out = '';
  let i = start + 1;
  while (i < src.length) {
    const c = src[i]!;
    if (c === quote) return { value: out, end: i + 1 };
    if (c === '\\') {
      const e = src[i + 1];
      if (e === undefined) break;
      if (e === 'u') {
        const hex = src.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw exprError('bad \\u escape: expected 4 hex digits', i);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
        continue;
      }
      const mapped = ESCAPES[e];
      if (mapped === undefined) throw exprError(`unknown escape \\${e}`, i);
      out += mapped;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  throw exprError('unterminated string', start);
}

/**
 * Tokenize from `start`. With `stopAtBrace`, tokenizing stops after the first `}` outside a string
 * (the end of a `${...}`); the returned tokens end with an `end` token at that brace.
 */
function tokenize(src: string, start: number, stopAtBrace: boolean): { tokens: Token[]; end: number } {
  const tokens: Token[] = [];
  let i = start;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const s = readString(src, i);
      tokens.push({ kind: 'str', text: src.slice(i, s.end), value: s.value, pos: i });
      i = s.end;
      continue;
    }
    if (c >= '0' && c <= '9') {
      const m = NUMBER.exec(src.slice(i))!;
      tokens.push({ kind: 'num', text: m[0], value: Number(m[0]), pos: i });
      i += m[0].length;
      if (i < src.length && IDENT_START.test(src[i]!)) throw exprError(`unexpected "${src[i]}" after number`, i);
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      // A '-' inside an identifier is allowed (step ids like `fetch-page`) but not at the end.
      while (j < src.length && IDENT_PART.test(src[j]!)) j++;
      while (src[j - 1] === '-') j--;
      tokens.push({ kind: 'ident', text: src.slice(i, j), pos: i });
      i = j;
      continue;
    }
    const p = PUNCT.find((op) => src.startsWith(op, i));
    if (p === undefined) throw exprError(`unexpected character "${c}"`, i);
    if (p === '}') {
      if (!stopAtBrace) throw exprError('unexpected "}"', i);
      tokens.push({ kind: 'end', text: '}', pos: i });
      return { tokens, end: i + 1 };
    }
    tokens.push({ kind: 'punct', text: p, pos: i });
    i += p.length;
  }
  if (stopAtBrace) throw exprError('unterminated "${": missing "}"', start - 2);
  tokens.push({ kind: 'end', text: '', pos: src.length });
  return { tokens, end: src.length };
}

const INFIX: Record<string, number> = { '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 4, '<=': 4, '>': 4, '>=': 4 };
const PREFIX_POWER = 5;

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private expect(text: string, what: string): Token {
    const t = this.peek();
    if (t.kind !== 'punct' || t.text !== text) throw exprError(`expected ${what}, found ${describe(t)}`, t.pos);
    return this.next();
  }

  parseAll(): Expr {
    if (this.peek().kind === 'end') throw exprError('empty expression', this.peek().pos);
    const e = this.expr(0);
    const t = this.peek();
    if (t.kind !== 'end') throw exprError(`unexpected ${describe(t)}`, t.pos);
    return e;
  }

  private expr(minPower: number): Expr {
    let left = this.prefix();
    for (;;) {
      const t = this.peek();
      const power = t.kind === 'punct' ? INFIX[t.text] : undefined;
      if (power === undefined || power <= minPower) return left;
      this.next();
      const right = this.expr(power);
      left = { type: 'binary', op: t.text as BinaryOp, left, right };
    }
  }

  private prefix(): Expr {
    const t = this.next();
    switch (t.kind) {
      case 'num':
        return { type: 'literal', value: t.value as number };
      case 'str':
        return { type: 'literal', value: t.value as string };
      case 'ident':
        return this.identifier(t);
      case 'punct':
        if (t.text === '(') {
          const e = this.expr(0);
          this.expect(')', '")"');
          return e;
        }
        if (t.text === '!' || t.text === '-') {
          const arg = this.expr(PREFIX_POWER);
          if (t.text === '-' && arg.type === 'literal' && typeof arg.value === 'number') {
            return { type: 'literal', value: -arg.value };
          }
          return { type: 'unary', op: t.text, arg };
        }
        throw exprError(`unexpected ${describe(t)}`, t.pos);
      case 'end':
        throw exprError('unexpected end of expression', t.pos);
    }
  }

  private identifier(t: Token): Expr {
    switch (t.text) {
      case 'true':
        return { type: 'literal', value: true };
      case 'false':
        return { type: 'literal', value: false };
      case 'null':
        return { type: 'literal', value: null };
      case 'inputs': {
        const path = this.path();
        const name = path.shift();
        if (typeof name !== 'string') throw exprError('expected an input name after "inputs."', t.pos);
        return { type: 'input', name, path, pos: t.pos };
      }
      case 'steps': {
        const path = this.path();
        const id = path.shift();
        if (typeof id !== 'string') throw exprError('expected a step id after "steps."', t.pos);
        const field = path.shift();
        if (field !== 'output' && field !== 'status') {
          throw exprError(`steps.${id} must be followed by ".output" or ".status"`, t.pos);
        }
        if (field === 'status' && path.length > 0) throw exprError(`steps.${id}.status has no fields`, t.pos);
        return { type: 'step', id, field, path, pos: t.pos };
      }
    }
    const next = this.peek();
    if (next.kind === 'punct' && next.text === '(') {
      const fn = FUNCTIONS[t.text];
      if (!fn) throw exprError(`unknown function "${t.text}" (known: ${Object.keys(FUNCTIONS).join(', ')})`, t.pos);
      this.next();
      const args: Expr[] = [];
      if (!(this.peek().kind === 'punct' && this.peek().text === ')')) {
        for (;;) {
          args.push(this.expr(0));
          if (this.peek().kind === 'punct' && this.peek().text === ',') {
            this.next();
            continue;
          }
          break;
        }
      }
      this.expect(')', '"," or ")"');
      if (args.length < fn.min || args.length > fn.max) {
        const want = fn.min === fn.max ? `${fn.min}` : fn.max === Infinity ? `at least ${fn.min}` : `${fn.min} to ${fn.max}`;
        throw exprError(`${t.text}() takes ${want} argument(s), got ${args.length}`, t.pos);
      }
      return { type: 'call', name: t.text, args, pos: t.pos };
    }
    throw exprError(`unknown name "${t.text}": expressions reference inputs.<name> or steps.<id>.output / .status`, t.pos);
  }

  /** `.name`, `["key"]` and `[0]` segments; indexes are literals so references stay static. */
  private path(): PathSegment[] {
    const out: PathSegment[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'punct') return out;
      if (t.text === '.') {
        this.next();
        const name = this.next();
        if (name.kind !== 'ident') throw exprError(`expected a field name after ".", found ${describe(name)}`, name.pos);
        out.push(name.text);
      } else if (t.text === '[') {
        this.next();
        const key = this.next();
        if (key.kind === 'num' && Number.isInteger(key.value)) out.push(key.value as number);
        else if (key.kind === 'str') out.push(key.value as string);
        else throw exprError(`expected an integer index or a quoted key inside "[]", found ${describe(key)}`, key.pos);
        this.expect(']', '"]"');
      } else {
        return out;
      }
    }
  }
}

function describe(t: Token): string {
  return t.kind === 'end' ? (t.text === '}' ? '"}"' : 'end of expression') : `"${t.text}"`;
}

/** Parse a bare expression (no `${}`); throws FlowError('expr_syntax') with the column. */
export function parseExpr(src: string): Expr {
  return new Parser(tokenize(src, 0, false).tokens).parseAll();
}

/** Parse the expression starting at `start` (just after `${`); returns it and the offset after its `}`. */
export function parseEmbedded(src: string, start: number): { expr: Expr; end: number } {
  const { tokens, end } = tokenize(src, start, true);
  return { expr: new Parser(tokens).parseAll(), end };
}

// ---- canonical printing ---------------------------------------------------------------------

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$/;
const RESERVED = new Set(['true', 'false', 'null']);

export function printString(s: string): string {
  let out = "'";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "'") out += "\\'";
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

function printNumber(n: number): string {
  // Non-finite numbers cannot come from the parser; a literal always prints back to the same value.
  return String(n);
}

function printPath(path: PathSegment[]): string {
  return path.map((seg) => (typeof seg === 'number' ? `[${seg}]` : PLAIN_KEY.test(seg) && !RESERVED.has(seg) ? `.${seg}` : `[${printString(seg)}]`)).join('');
}

function power(e: Expr): number {
  if (e.type === 'binary') return INFIX[e.op]!;
  if (e.type === 'unary') return PREFIX_POWER;
  return 10;
}

/** The canonical text of an expression: minimal parentheses, single spaces around operators, single-quoted strings. */
export function printExpr(e: Expr): string {
  switch (e.type) {
    case 'literal':
      if (typeof e.value === 'string') return printString(e.value);
      if (typeof e.value === 'number') return e.value < 0 || Object.is(e.value, -0) ? `-${printNumber(-e.value)}` : printNumber(e.value);
      return String(e.value);
    case 'input':
      return `inputs${printPath([e.name, ...e.path])}`;
    case 'step':
      return `steps${printPath([e.id, e.field, ...e.path])}`;
    case 'call':
      return `${e.name}(${e.args.map(printExpr).join(', ')})`;
    case 'unary': {
      const inner = printExpr(e.arg);
      return power(e.arg) < PREFIX_POWER || e.arg.type === 'unary' || (e.arg.type === 'literal' && typeof e.arg.value === 'number' && e.arg.value < 0)
        ? `${e.op}(${inner})`
        : `${e.op}${inner}`;
    }
    case 'binary': {
      const p = INFIX[e.op]!;
      // Left-associative: the right operand needs parentheses at equal precedence.
      const l = power(e.left) < p ? `(${printExpr(e.left)})` : printExpr(e.left);
      const r = power(e.right) <= p ? `(${printExpr(e.right)})` : printExpr(e.right);
      return `${l} ${e.op} ${r}`;
    }
  }
}
