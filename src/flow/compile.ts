import { digestOf, type Digest } from '../canonical.js';
import { builtinTools } from '../tools/builtins/index.js';
import { addPins, resolvePin, type LockEntry, type LockFile } from '../tools/lock.js';
import { createToolRegistry } from '../tools/registry.js';
import { CAPABILITIES, type Capability, type JsonSchema, type Tool, type ToolRegistry } from '../tools/types.js';
import { checkCondition, checkLiteralArgs, checkValue, type CheckEnv } from './check.js';
import { DiagnosticSink, NO_SOURCE, sortDiagnostics, type Locator } from './diagnostics.js';
import { normalizeCondition, normalizeValue } from './expr.js';
import { buildInputContracts } from './inputs.js';
import { parseFlowSource } from './source.js';
import type { Diagnostic, Flow, FlowSpec, RetryPolicy, StepSpec } from './types.js';
import { TOOL_REF, validateFlowShape } from './validate.js';

/** Defaults a step gets when it does not say otherwise (documented in docs/flow-language.md). */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({ max_attempts: 1, backoff_ms: 0, backoff_factor: 2 });
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface CompileOptions {
  /**
   * The name diagnostics carry: a project-relative path such as `flows/hello.yaml`. Never enters the
   * FlowSpec. Default: `<source>`.
   */
  file?: string;
  /** Tools `ref@range` resolves against. Default: the built-in tools (`createToolRegistry(builtinTools())`). */
  tools?: ToolRegistry;
  /** The current `flowctl.lock`. Default: none (every tool resolves to its highest matching version). */
  lock?: LockFile;
}

export interface CompileFlowOptions extends CompileOptions {
  /** Where fields are in the source, for diagnostics. Default: every diagnostic at 1:1. */
  locate?: Locator;
}

export type CompileResult =
  | {
      ok: true;
      spec: FlowSpec;
      flow_digest: Digest;
      /** The lock with `newPins` added (sorted); equal to the input lock when nothing new resolved. */
      lock: LockFile;
      /** Tool versions resolved now that the lock did not pin yet. */
      newPins: LockEntry[];
      /** The validated Flow the spec was compiled from. */
      flow: Flow;
    }
  | { ok: false; diagnostics: Diagnostic[] };

/** The file name diagnostics carry when the caller names none. */
const DEFAULT_FILE = '<source>';

/**
 * Compile Flow YAML text to a FlowSpec and its digest, or structured diagnostics. With no options:
 * the built-in tools and no lock (`compile(text).spec` is what `engine.run({ spec })` takes).
 */
export function compile(source: string, options: CompileOptions = {}): CompileResult {
  const parsed = parseFlowSource(source, options.file ?? DEFAULT_FILE);
  if (parsed.sink.failed) return { ok: false, diagnostics: sortDiagnostics(parsed.sink.list) };
  return compileWith(parsed.value, options, parsed.sink);
}

/** Compile an already-parsed Flow object (e.g. a Recording's flow). Defaults as `compile`. */
export function compileFlow(flow: unknown, options: CompileFlowOptions = {}): CompileResult {
  return compileWith(flow, options, new DiagnosticSink(options.file ?? DEFAULT_FILE, options.locate ?? NO_SOURCE));
}

// Built once, on the first compile that brings no registry: the built-in tools never change.
let builtins: ToolRegistry | undefined;

function compileWith(value: unknown, options: CompileOptions, sink: DiagnosticSink): CompileResult {
  const registry = options.tools ?? (builtins ??= createToolRegistry(builtinTools()));
  const flow = validateFlowShape(value, sink);
  if (!flow) return { ok: false, diagnostics: sortDiagnostics(sink.list) };

  const inputs = buildInputContracts(flow.inputs, sink);
  const env: CheckEnv = { inputs, stepOutputs: {}, stepIndex: new Map(flow.steps.map((s, i) => [s.id, i])), sink };

  const tools: (Tool | undefined)[] = [];
  const pins: (LockEntry | undefined)[] = [];
  const newPins = new Map<string, LockEntry>();
  flow.steps.forEach((step, i) => {
    const [, ref, range] = TOOL_REF.exec(step.tool)!;
    const r = resolvePin(registry, options.lock, ref!, range!);
    if (!r.ok) {
      sink.error(r.code, r.message, ['steps', i, 'tool']);
      return;
    }
    tools[i] = r.tool;
    pins[i] = r.pin;
    env.stepOutputs[step.id] = r.tool.contract.output_schema as JsonSchema;
    if (!r.fromLock) newPins.set(`${r.pin.ref}@${r.pin.version}`, r.pin);
  });

  const capabilities: Capability[][] = [];
  flow.steps.forEach((step, i) => {
    const contract = tools[i]?.contract;
    const args = step.args ?? {};
    const { readsSecret, dynamic } = checkValue(args, ['steps', i, 'args'], { where: 'args', index: i, contract }, env);
    if (contract) {
      checkLiteralArgs(args, dynamic, i, contract, env);
      // `secrets` stays only on the step that is fed a secret input: the one place a value is resolved.
      capabilities[i] = CAPABILITIES.filter((c) => contract.capabilities.includes(c) && (c !== 'secrets' || readsSecret));
    }
    if (step.if !== undefined) checkCondition(step.if, i, env);
  });
  if (flow.output !== undefined) checkValue(flow.output, ['output'], { where: 'output' }, env);

  if (sink.failed) return { ok: false, diagnostics: sortDiagnostics(sink.list) };

  const steps: StepSpec[] = flow.steps.map((step, i) => {
    const spec: StepSpec = {
      id: step.id,
      tool: { ...pins[i]! },
      capabilities: capabilities[i]!,
      args: normalizeValue(step.args ?? {}) as Record<string, unknown>,
      retry: { ...DEFAULT_RETRY, ...step.retry },
      timeout_ms: step.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    };
    if (step.if !== undefined) spec.if = normalizeCondition(step.if);
    if (step.optional === true) spec.optional = true;
    return spec;
  });
  const spec: FlowSpec = { flowspec: 1, name: flow.name, inputs, steps };
  if (flow.description !== undefined) spec.description = flow.description;
  if (flow.output !== undefined) spec.output = normalizeValue(flow.output);
  const pinsList = [...newPins.values()];
  return { ok: true, spec, flow_digest: digestOf(spec), lock: addPins(options.lock, pinsList), newPins: pinsList, flow };
}
