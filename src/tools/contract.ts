import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { canonicalJson, deepFreeze, digestOf, type Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import { validateMetaSchema } from './schema-meta.generated.js';
import { type GeneratedValidator, TOOL_VALIDATORS } from './tool-validators.generated.js';
import { CAPABILITIES, type JsonSchema, type Tool, type ToolContext, type ToolContract } from './types.js';

/**
 * Tool contracts: their digest, their definition, and JSON Schema validation.
 *
 * Validation uses Ajv with the JSON Schema draft 2020-12 dialect everywhere (contracts, flow inputs),
 * options `allErrors: true` (every issue, not just the first), `strict: false` (unknown keywords such
 * as annotations are ignored) and `validateFormats: false` (`format` is an annotation only).
 */

/** One validation problem. `path` is dotted with brackets for indices (`headers.accept`, `items[0]`); `''` is the root. */
export interface SchemaIssue {
  path: string;
  message: string;
}

export interface SchemaValidation {
  ok: boolean;
  issues: SchemaIssue[];
}

// `validateSchema: false`: each schema is checked against the meta-schema by checkSchema below, with
// the validator generated at build time, not one Ajv compiles at run time.
const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
const META_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** What validateAgainstSchema calls: Ajv's compiled function, or one generated at build time. */
type Validator = ValidateFunction | GeneratedValidator;
const byIdentity = new WeakMap<object, Validator>();
const byContent = new Map<string, Validator>();
// Flows can bring their own schemas; bound the cache so a long-lived server does not grow forever.
const MAX_CACHED = 1000;

function compile(schema: JsonSchema): Validator {
  const known = byIdentity.get(schema);
  if (known) return known;
  const key = canonicalJson(schema);
  // The built-in and browser tools' schemas were compiled at build time (scripts/build-tool-validators.mjs:
  // Ajv's code for them, same options, so the same errors); only other schemas (flows, packs) compile here.
  let fn = byContent.get(key) ?? TOOL_VALIDATORS.get(key);
  if (!fn) {
    try {
      checkSchema(schema);
      fn = ajv.compile(schema);
    } catch (err) {
      throw new FlowError('invalid_schema', `[flowctl] [tools] invalid JSON Schema: ${(err as Error).message}`, { cause: err });
    }
    if (byContent.size >= MAX_CACHED) byContent.delete(byContent.keys().next().value as string);
    byContent.set(key, fn);
  }
  byIdentity.set(schema, fn);
  return fn;
}

/**
 * Whether `schema` passed the meta-schema check already: it is one of the schemas compiled at build time
 * (the built-in and browser tools': Ajv checked them there), or this process compiled it. Each `flowctl
 * run` defines every built-in tool, so checking their schemas again at every start was work for nothing.
 * A build-time validator found here is remembered for the schema object, as compile does.
 */
function checkedBefore(schema: JsonSchema): boolean {
  if (byIdentity.has(schema)) return true;
  const fn = TOOL_VALIDATORS.get(canonicalJson(schema));
  if (fn) byIdentity.set(schema, fn);
  return fn !== undefined;
}

/**
 * Ajv's `validateSchema` (the meta-schema check, its errors or null), but for the 2020-12 dialect
 * through the validator scripts/build-schema-meta.mjs generated from Ajv's meta-schema: compiling that
 * meta-schema here cost ~40 ms at the start of every process that checks a schema (each `flowctl run`
 * defines the built-in tools). A schema naming another `$schema` goes to Ajv.
 */
function metaSchemaErrors(schema: object): ErrorObject[] | null {
  const dialect = (schema as { $schema?: unknown }).$schema;
  if (dialect !== undefined && dialect !== META_2020_12) return ajv.validateSchema(schema) ? null : (ajv.errors ?? []);
  return validateMetaSchema(schema) ? null : (validateMetaSchema.errors ?? []);
}

/** What Ajv's own `validateSchema` option does before a compile, with the same message. */
function checkSchema(schema: JsonSchema): void {
  if (typeof schema !== 'object' || schema === null) return; // Ajv's compile says what is wrong.
  const errors = metaSchemaErrors(schema);
  if (errors) throw new Error(`schema is invalid: ${ajv.errorsText(errors)}`);
}

function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  return base === '' ? segment : `${base}.${segment}`;
}

/** Ajv's instancePath is a JSON Pointer (`/headers/accept`, `/items/0`); turn it into our dotted form. */
function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<string>((acc, s) => joinPath(acc, /^\d+$/.test(s) ? Number(s) : s), '');
}

function toIssue(e: ErrorObject): SchemaIssue {
  const path = pointerToPath(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { path: joinPath(path, String(p.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { path: joinPath(path, String(p.additionalProperty)), message: 'is not an allowed property' };
    case 'enum':
      return { path, message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { path, message: e.message ?? `fails ${e.keyword}` };
  }
}

/**
 * Compile (and cache) the validator of `schema` ahead of its first use, e.g. while a process waits on
 * something else; a schema that does not compile is left to the validation that will report it.
 */
export function precompileSchema(schema: JsonSchema): void {
  try {
    compile(schema);
  } catch {
    // validateAgainstSchema throws invalid_schema when the schema is used.
  }
}

/** Validate `value` against a JSON Schema (draft 2020-12). Compiled validators are cached by schema content. */
export function validateAgainstSchema(schema: JsonSchema, value: unknown): SchemaValidation {
  const fn = compile(schema);
  if (fn(value)) return { ok: true, issues: [] };
  const seen = new Set<string>();
  const issues: SchemaIssue[] = [];
  for (const issue of (fn.errors ?? []).map(toIssue)) {
    const key = `${issue.path}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return { ok: false, issues };
}

/** Human summary of issues for an error message: `url is required; method must be one of "GET", "POST"`. */
export function formatIssues(issues: SchemaIssue[]): string {
  return issues.map((i) => (i.path === '' ? `value ${i.message}` : `${i.path} ${i.message}`)).join('; ');
}

/** `contract_digest`: the digest of the canonical JSON of exactly the ToolContract fields (extra fields ignored). */
export function contractDigest(contract: ToolContract): Digest {
  const cached = digestCache.get(contract);
  if (cached) return cached;
  const { ref, version, description, input_schema, output_schema, capabilities } = contract;
  const digest = digestOf({ ref, version, description, input_schema, output_schema, capabilities });
  // The engine checks every step's pin on every run: remember the digest of a contract that cannot
  // change any more (defineTool deep-freezes its contract).
  if (Object.isFrozen(contract) && Object.isFrozen(input_schema) && Object.isFrozen(output_schema)) digestCache.set(contract, digest);
  return digest;
}

const digestCache = new WeakMap<ToolContract, Digest>();

const REF = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)+$/;
const SEMVER = /^\d+\.\d+\.\d+$/;

/** Check a contract's shape; throws FlowError `invalid_contract` naming every problem. */
export function checkContract(contract: ToolContract): void {
  const problems: string[] = [];
  if (typeof contract.ref !== 'string' || !REF.test(contract.ref)) problems.push(`ref "${contract.ref}" is not <namespace>/<name> in lowercase`);
  if (typeof contract.version !== 'string' || !SEMVER.test(contract.version)) problems.push(`version "${contract.version}" is not MAJOR.MINOR.PATCH`);
  if (typeof contract.description !== 'string' || contract.description.trim() === '') problems.push('description is empty');
  if (!Array.isArray(contract.capabilities)) problems.push('capabilities is not a list');
  else {
    for (const c of contract.capabilities) if (!CAPABILITIES.includes(c)) problems.push(`unknown capability "${String(c)}"`);
    if (new Set(contract.capabilities).size !== contract.capabilities.length) problems.push('capabilities has duplicates');
  }
  for (const key of ['input_schema', 'output_schema'] as const) {
    const schema = contract[key];
    if (schema === null || typeof schema !== 'object' || schema.type !== 'object') {
      problems.push(`${key} must be a JSON Schema with root type "object"`);
      continue;
    }
    if (checkedBefore(schema)) continue;
    // Meta-schema validation only: compiling every contract's schemas at import would cost every CLI
    // start tens of milliseconds; validators compile lazily on first use (and are cached).
    const errors = metaSchemaErrors(schema);
    if (errors) problems.push(`${key}: ${ajv.errorsText(errors, { dataVar: key })}`);
  }
  if (problems.length > 0) {
    throw new FlowError('invalid_contract', `[flowctl] [tools] contract ${contract.ref}@${contract.version}: ${problems.join('; ')}`, {
      data: { ref: contract.ref, version: contract.version, problems },
    });
  }
}

/**
 * Errors thrown by tools carry `data.retryable` (boolean): the runner retries only retryable errors,
 * within the step's retry policy. Build them with toolError so the convention holds.
 */
export function toolError(code: string, message: string, options: { retryable: boolean; data?: Record<string, unknown>; cause?: unknown }): FlowError {
  return new FlowError(code, message, { data: { ...options.data, retryable: options.retryable }, cause: options.cause });
}

/** Whether an error thrown by a tool may succeed on another attempt (`data.retryable === true`). */
export function isRetryableError(err: unknown): boolean {
  if (!isFlowError(err)) return false;
  const data = err.data as { retryable?: unknown } | undefined;
  return data?.retryable === true;
}

/**
 * The error to throw when `ctx.signal` aborted: its reason when that is already a FlowError (the runner's
 * step timeout or cancellation), `step_timeout` for a plain timeout reason, otherwise `aborted`.
 */
export function abortError(signal: AbortSignal, component: string): FlowError {
  const reason: unknown = signal.reason;
  if (isFlowError(reason)) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return toolError('step_timeout', `[flowctl] [${component}] the step timed out`, { retryable: true, cause: reason });
  }
  return toolError('aborted', `[flowctl] [${component}] aborted`, { retryable: false, cause: reason });
}

/**
 * Define a tool. The contract is checked (`invalid_contract`) and frozen; `run` receives input already
 * validated against `input_schema` (else FlowError `invalid_tool_input`, not retryable) and its result
 * is validated against `output_schema` (else `invalid_tool_output`, not retryable).
 */
export function defineTool<I = any, O = unknown>(contract: ToolContract, run: (input: I, ctx: ToolContext) => Promise<O>): Tool {
  checkContract(contract);
  const frozen = deepFreeze(structuredClone(contract));
  const id = `${contract.ref}@${contract.version}`;
  return {
    contract: frozen,
    async run(input: unknown, ctx: ToolContext): Promise<unknown> {
      const inCheck = validateAgainstSchema(frozen.input_schema, input);
      if (!inCheck.ok) {
        throw toolError('invalid_tool_input', `[flowctl] [${id}] invalid input: ${formatIssues(inCheck.issues)}`, {
          retryable: false,
          data: { issues: inCheck.issues },
        });
      }
      const output = await run(input as I, ctx);
      const outCheck = validateAgainstSchema(frozen.output_schema, output);
      if (!outCheck.ok) {
        throw toolError('invalid_tool_output', `[flowctl] [${id}] output breaks the contract: ${formatIssues(outCheck.issues)}`, {
          retryable: false,
          data: { issues: outCheck.issues },
        });
      }
      return output;
    },
  };
}
