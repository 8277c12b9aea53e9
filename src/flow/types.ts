import type { Digest } from '../canonical.js';
import type { Capability, JsonSchema } from '../tools/types.js';

/**
 * Flow (authored YAML) and FlowSpec (compiled, canonical, content-addressed). See docs/flow-language.md.
 *
 * Expressions: inside any string in `args`, `if` and `output`, `${ expr }` is evaluated. A string that
 * is exactly one `${...}` yields the referenced value with its type; otherwise the string is an
 * interpolation. `expr` references `inputs.<name>...` and `steps.<id>.output...` of earlier steps, with
 * literals, comparison and boolean operators and a fixed set of pure functions. No clock, no
 * randomness, no arbitrary code.
 */

export type InputType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'enum';

export interface FlowInput {
  type: InputType;
  description?: string;
  required?: boolean;
  default?: unknown;
  secret?: boolean;
  /** enum only: the allowed values */
  values?: (string | number | boolean)[];
  /** array only: the item schema (an input-like type or JSON Schema) */
  items?: Record<string, unknown>;
}

export interface RetryPolicy {
  max_attempts: number;
  backoff_ms: number;
  backoff_factor: number;
}

export interface FlowStep {
  id: string;
  /** `ref@version`, e.g. `core/template@1` */
  tool: string;
  args?: Record<string, unknown>;
  if?: string;
  retry?: Partial<RetryPolicy>;
  timeout_ms?: number;
  /**
   * The step may find nothing to act on: a tool that fails `target_absent` (its target did not appear
   * within its short window) skips the step (`step_skipped`), and the run goes on.
   */
  optional?: boolean;
}

export interface Flow {
  name: string;
  description?: string;
  inputs?: Record<string, FlowInput>;
  steps: FlowStep[];
  output?: unknown;
}

/** The normalized input contract of one input, as stored in a FlowSpec. */
export interface InputContract {
  type: InputType;
  description?: string;
  required: boolean;
  default?: unknown;
  secret: boolean;
  /** JSON Schema of the value (for a secret input: a `secret:<name>` reference string). */
  schema: JsonSchema;
}

export interface StepSpec {
  id: string;
  tool: { ref: string; version: string; contract_digest: Digest };
  /** The capabilities this step may exercise: the contract's, with `secrets` only when fed a secret input. */
  capabilities: Capability[];
  args: Record<string, unknown>;
  if?: string;
  retry: RetryPolicy;
  timeout_ms: number;
  /** Set only when true (a step without it keeps its digest): see FlowStep.optional. */
  optional?: true;
}

export interface FlowSpec {
  /** FlowSpec format version. */
  flowspec: 1;
  name: string;
  description?: string;
  inputs: Record<string, InputContract>;
  steps: StepSpec[];
  /** Output projection (expressions); absent when the flow has no output. */
  output?: unknown;
}

/** A compiled flow with its digest. `flow_digest` = digestOf(spec). */
export interface CompiledFlow {
  spec: FlowSpec;
  flow_digest: Digest;
}

/** A structured diagnostic (compile, lint). `line` and `column` are 1-based. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  file: string;
  line: number;
  column: number;
  /** Dotted path of the offending field, e.g. `steps[2].args.url`. */
  field?: string;
}
