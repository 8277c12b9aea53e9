// The Flow language: parse, validate, compile, emit, lint (docs/flow-language.md). Re-exports only.
export { compile, compileFlow, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS } from './compile.js';
export type { CompileOptions, CompileFlowOptions, CompileResult } from './compile.js';
export { parseFlowSource, type ParsedSource } from './source.js';
export { DIAGNOSTIC_CODES, NO_SOURCE, fieldPath, formatDiagnostic, sortDiagnostics } from './diagnostics.js';
export type { DiagnosticCode, Locator } from './diagnostics.js';
export { emitYaml, emitTs, flowOfSpec, type EmitYamlOptions } from './emit.js';
export { lintCompiled, lintRules, registerLintRule, type LintContext, type LintRule } from './lint.js';
export {
  collectReferences,
  evaluateCondition,
  evaluateValue,
  normalizeCondition,
  normalizeValue,
  parseCondition,
  parseTemplate,
  type ExprScope,
  type Reference,
  type Template,
} from './expr.js';
export { FLOW_NAME, IDENTIFIER, INPUT_TYPES, TOOL_REF } from './validate.js';
