import type { Locator } from './diagnostics.js';
import type { Diagnostic, Flow, FlowSpec } from './types.js';

/**
 * Lint: style findings on a flow that compiled. Compile diagnostics come first (from compile); these
 * rules add warnings, which never fail a lint. Two rules are built in (`non-canonical`, `no-output`);
 * other parts register their own with registerLintRule (e.g. brittle locators in Recordings).
 */

export interface LintContext {
  spec: FlowSpec;
  /** The validated Flow the spec came from. */
  flow: Flow;
  /** The name diagnostics carry (project-relative). */
  file: string;
  /** The source text and its kind (`yaml`, or a loader's kind such as `recording`). */
  source?: { text: string; kind: string };
  /** Canonical YAML of the flow (what `emit` prints), when the source is YAML. */
  canonical?: string;
  locate: Locator;
}

export interface LintRule {
  /** The finding code, e.g. `no-output`. */
  name: string;
  check(ctx: LintContext): Diagnostic[];
}

function finding(ctx: LintContext, code: string, message: string, line: number, column: number, field?: string): Diagnostic {
  const d: Diagnostic = { severity: 'warning', code, message, file: ctx.file, line, column };
  if (field !== undefined) d.field = field;
  return d;
}

function firstDifferentLine(a: string, b: string): number {
  const la = a.split('\n');
  const lb = b.split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) if (la[i] !== lb[i]) return i + 1;
  return 1;
}

export const nonCanonicalRule: LintRule = {
  name: 'non-canonical',
  check(ctx) {
    if (ctx.source?.kind !== 'yaml' || ctx.canonical === undefined || ctx.source.text === ctx.canonical) return [];
    const line = firstDifferentLine(ctx.source.text, ctx.canonical);
    return [finding(ctx, 'non-canonical', `the file is not in canonical form (first difference at line ${line}); "flowctl lint --fix" rewrites it`, line, 1)];
  },
};

export const noOutputRule: LintRule = {
  name: 'no-output',
  check(ctx) {
    if (ctx.spec.output !== undefined) return [];
    return [finding(ctx, 'no-output', 'the flow has no "output": callers get no result; project one, e.g. output: ${steps.<id>.output}', 1, 1, 'output')];
  },
};

const rules: LintRule[] = [nonCanonicalRule, noOutputRule];

/** Add a lint rule (idempotent by name: registering a name again replaces the rule). */
export function registerLintRule(rule: LintRule): void {
  const i = rules.findIndex((r) => r.name === rule.name);
  if (i >= 0) rules[i] = rule;
  else rules.push(rule);
}

export function lintRules(): readonly LintRule[] {
  return [...rules];
}

/** Run every rule; findings sorted by line and column. */
export function lintCompiled(ctx: LintContext): Diagnostic[] {
  return rules.flatMap((r) => r.check(ctx)).sort((a, b) => a.line - b.line || a.column - b.column || a.code.localeCompare(b.code));
}
