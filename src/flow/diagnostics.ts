import type { Diagnostic } from './types.js';

/**
 * Diagnostics: how compile and lint report problems. Every code is documented in
 * docs/flow-language.md ("Diagnostics"); tests in test/fixtures/bad-flows pin code, line and column.
 */

export type PathSegment = string | number;

/** Where a field is in the source. `key: true` points at the mapping key instead of the value;
 * `offset` is a 0-based offset inside a string value (an expression's column). */
export type Locator = (path: readonly PathSegment[], options?: { key?: boolean; offset?: number }) => { line: number; column: number };

/** For flows that have no source text (built in code, or from a Recording): everything is at 1:1. */
export const NO_SOURCE: Locator = () => ({ line: 1, column: 1 });

export const DIAGNOSTIC_CODES = [
  'yaml_syntax',
  'not_a_mapping',
  'missing_field',
  'unknown_field',
  'bad_type',
  'bad_name',
  'bad_input',
  'duplicate_step',
  'no_steps',
  'unknown_tool',
  'bad_tool_ref',
  'unknown_input',
  'unknown_step',
  'forward_reference',
  'type_mismatch',
  'secret_not_allowed',
  'lock_mismatch',
  'expr_syntax',
  'bad_retry',
  'bad_timeout',
  'bad_condition',
] as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

/** `steps[2].args.url` from `['steps', 2, 'args', 'url']`. */
export function fieldPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Collects diagnostics for one file. */
export class DiagnosticSink {
  readonly list: Diagnostic[] = [];
  constructor(
    readonly file: string,
    readonly locate: Locator,
  ) {}

  error(code: DiagnosticCode, message: string, path: readonly PathSegment[], options?: { key?: boolean; offset?: number }): void {
    this.push('error', code, message, path, options);
  }

  push(severity: Diagnostic['severity'], code: string, message: string, path: readonly PathSegment[], options?: { key?: boolean; offset?: number }): void {
    const { line, column } = this.locate(path, options);
    const d: Diagnostic = { severity, code, message, file: this.file, line, column };
    if (path.length > 0) d.field = fieldPath(path);
    this.list.push(d);
  }

  get failed(): boolean {
    return this.list.some((d) => d.severity === 'error');
  }
}

/** Stable order: by line, then column, then code. */
export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => a.line - b.line || a.column - b.column || a.code.localeCompare(b.code));
}

/** `flows/x.yaml:3:7 error unknown_step: ... (steps[1].args.url)` — the human form on stderr. */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column} ${d.severity} ${d.code}: ${d.message}${d.field ? ` (${d.field})` : ''}`;
}
