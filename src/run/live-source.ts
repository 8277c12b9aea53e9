import { digestBytes, jsonDepthExceeds, MAX_STORED_DEPTH, type Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import { evaluateValue } from '../flow/expr.js';
import type { FlowSpec, StepSpec } from '../flow/types.js';
import type { Clock, Logger } from '../ports/clock.js';
import type { Executor } from '../ports/executor.js';
import type { SecretStore } from '../ports/secrets.js';
import type { ArtifactStore } from '../ports/storage.js';
import type { SecretMask } from '../secrets/mask.js';
import { mentionsRef, stringLeaves } from '../secrets/refs.js';
import { contractDigest, formatIssues, isRetryableError, toolError, validateAgainstSchema } from '../tools/contract.js';
import { createEgressGuard, type EgressGuard } from '../tools/egress.js';
import { deniedCapabilities, type ToolPolicy } from '../tools/policy.js';
import type { FileSource, RunScope, StepWarning, Tool, ToolContext, ToolRegistry } from '../tools/types.js';
import type { AttemptHooks, AttemptRequest, AttemptResult, StepSource } from './step-source.js';
import type { StepError } from './types.js';

export interface LiveSourceOptions {
  runId: string;
  spec: FlowSpec;
  /** Resolved inputs, secrets as references. */
  inputs: Record<string, unknown>;
  tools: ToolRegistry;
  executor?: Executor;
  secrets?: SecretStore;
  mask: SecretMask;
  clock: Clock;
  logger: Logger;
  cwd: string;
  toolOptions?: Record<string, Record<string, unknown>>;
  scope: RunScope;
  artifacts?: ArtifactStore;
  confirm?: () => Promise<boolean>;
  /** The run's tool policy (capabilities, egress guard); absent: everything allowed. */
  policy?: ToolPolicy;
  /** Where upload files are read instead of `cwd` (RunOptions.files). */
  files?: FileSource;
}

/** Executes steps for real: tool lookup and pin check, secrets, timeout, contract checks. */
export function createLiveSource(o: LiveSourceOptions): StepSource {
  const resolved = new Map<string, Tool>();
  // One guard per run: its allowlist is parsed once, and every step of the run shares it.
  const egress = o.policy?.egress ? createEgressGuard(o.policy.egress) : undefined;
  // Artifact writes still under way (a step does not wait for its screenshot to be stored).
  const writes = new Set<Promise<Digest>>();
  // Writes that failed once: tried again before the run finishes, so a passing blip loses nothing.
  const failed: Array<() => Promise<void>> = [];
  // Artifacts whose bytes come after their step (ArtifactSink.later): hurried and awaited at the end.
  const later = new Set<LateArtifact>();

  return {
    prepare(step, _attempt) {
      const id = `${step.tool.ref}@${step.tool.version}`;
      const tool = o.tools.get(step.tool.ref, step.tool.version);
      if (!tool) {
        return {
          provider: 'in-process',
          failure: { code: 'unknown_tool', message: `[flowctl] [run] step "${step.id}": tool ${id} is not installed`, retryable: false },
        };
      }
      const actual = contractDigest(tool.contract);
      if (actual !== step.tool.contract_digest) {
        return {
          provider: 'in-process',
          failure: {
            code: 'tool_contract_mismatch',
            message: `[flowctl] [run] step "${step.id}": the installed ${id} has contract ${actual}, but the flow pins ${step.tool.contract_digest}; recompile the flow`,
            retryable: false,
          },
        };
      }
      const denied = deniedCapabilities(o.policy, tool, step.capabilities, { files: o.files !== undefined });
      if (denied.length > 0) {
        return {
          provider: 'in-process',
          failure: {
            code: 'tool_denied',
            message: `[flowctl] [run] step "${step.id}": ${id} needs the ${denied.join(', ')} capabilit${denied.length === 1 ? 'y' : 'ies'}, which this run's tool policy does not allow`,
            retryable: false,
          },
        };
      }
      resolved.set(step.id, tool);
      return { provider: o.executor?.accepts(tool) ? o.executor.name : 'in-process' };
    },

    async attempt(request, hooks) {
      return runAttempt(o, resolved.get(request.step.id)!, request, hooks, egress, { writes, failed, later });
    },

    backoff(ms, signal) {
      return o.clock.sleep(ms, signal);
    },

    async confirm() {
      return o.confirm ? o.confirm() : true;
    },

    async flush() {
      // Late artifacts first (their bytes become writes), then every write is waited for; one that failed
      // is tried once more, and a second failure is logged (the run's outcome is the steps' own: the
      // journal names the artifact, the store lacks it).
      for (const item of later) item.hurry?.();
      while (later.size > 0) await Promise.allSettled([...later].map((item) => item.digest));
      while (writes.size > 0) await Promise.allSettled([...writes]);
      for (const retry of failed.splice(0)) await retry();
    },
  };
}

async function runAttempt(
  o: LiveSourceOptions,
  tool: Tool,
  request: AttemptRequest,
  hooks: AttemptHooks,
  egress: EgressGuard | undefined,
  pending: { writes: Set<Promise<Digest>>; failed: Array<() => Promise<void>>; later: Set<LateArtifact> },
): Promise<AttemptResult> {
  const { step, attempt } = request;
  const warnings: StepWarning[] = [];
  const artifacts: Digest[] = [];
  const lateDigests: Promise<Digest | undefined>[] = [];
  const controller = new AbortController();
  const cancel = () => controller.abort(toolError('canceled', `[flowctl] [run] step "${step.id}" was canceled`, { retryable: false }));
  if (request.signal?.aborted) cancel();
  request.signal?.addEventListener('abort', cancel, { once: true });
  // Timeouts are real time on purpose: an injected test clock must not make every step time out.
  const timer = setTimeout(
    () => controller.abort(toolError('step_timeout', `[flowctl] [run] step "${step.id}" timed out after ${step.timeout_ms} ms`, { retryable: true })),
    step.timeout_ms,
  );
  let open = true;
  /** Store an artifact's bytes under their digest, off the step's path (`flush` waits for the write). */
  const store = (bytes: Uint8Array, mediaType: string): { digest: Digest; stored: Promise<Digest> } => {
    const digest = digestBytes(bytes);
    const stored = o.artifacts!.put(digest, bytes, mediaType).then(() => digest);
    const { writes, failed } = pending;
    writes.add(stored);
    const forget = () => writes.delete(stored);
    const warn = (err: unknown) => o.logger.warn(`[flowctl] [run] step "${step.id}": storing artifact ${digest} failed: ${o.mask.maskError(err)}`);
    stored.then(forget, () => {
      forget();
      failed.push(() => o.artifacts!.put(digest, bytes, mediaType).catch(warn));
    });
    return { digest, stored };
  };
  const ctx: ToolContext = {
    runId: o.runId,
    stepId: step.id,
    attempt,
    signal: controller.signal,
    timeoutMs: step.timeout_ms,
    cwd: o.cwd,
    effect(effect) {
      if (!open) {
        o.logger.warn(`[flowctl] [run] step "${step.id}" reported an effect after it ended; ignored`);
        return;
      }
      hooks.effect(effect);
    },
    warn(warning) {
      if (open) warnings.push(warning);
    },
    scope: o.scope,
    artifacts: o.artifacts && {
      put: (bytes, mediaType) => {
        // The digest is the step's as of the call: the write may finish after the step returned (a
        // screenshot is not waited for), and the run awaits it before it finishes (`flush`).
        const { digest, stored } = store(bytes, mediaType);
        if (open) artifacts.push(digest);
        return stored;
      },
      later: (bytes, mediaType, hurry) => {
        if (!open) {
          bytes.catch(() => {});
          return;
        }
        const digest = withinLateBound(bytes, o, step.id).then((b) => (b ? store(b, mediaType).digest : undefined));
        const item = { digest, hurry };
        pending.later.add(item);
        void digest.finally(() => pending.later.delete(item));
        lateDigests.push(digest);
      },
    },
    logger: {
      debug: (m, d) => o.logger.debug(o.mask.maskString(m), o.mask.mask(d)),
      info: (m, d) => o.logger.info(o.mask.maskString(m), o.mask.mask(d)),
      warn: (m, d) => o.logger.warn(o.mask.maskString(m), o.mask.mask(d)),
    },
    options: o.toolOptions?.[step.tool.ref.split('/')[0]!],
    isSecret: (text) => o.mask.covers(text),
    ...(egress ? { egress } : {}),
    ...(o.policy ? { policy: o.policy } : {}),
    ...(o.files ? { files: o.files } : {}),
    ...(step.optional ? { optional: true } : {}),
  };
  try {
    // The journaled input stays as journaled whatever the tool does with the object it is given.
    const resolvedInput = await withSecrets(o, step, request);
    const input = resolvedInput === request.input ? jsonCopy(resolvedInput) : resolvedInput;
    const inCheck = validateAgainstSchema(tool.contract.input_schema, input);
    if (!inCheck.ok) {
      throw new FlowError(
        'input_contract_violation',
        `[flowctl] [run] step "${step.id}": input breaks the ${step.tool.ref} contract: ${formatIssues(inCheck.issues)}`,
      );
    }
    const running = o.executor?.accepts(tool) ? o.executor.execute(tool, input, ctx) : tool.run(input, ctx);
    running.catch(() => undefined); // it may settle after a timeout already decided the attempt
    const output = toJson(await Promise.race([running, aborted(controller.signal)]), step.id);
    const outCheck = validateAgainstSchema(tool.contract.output_schema, output);
    if (!outCheck.ok) {
      throw new FlowError(
        'output_contract_violation',
        `[flowctl] [run] step "${step.id}": output breaks the ${step.tool.ref} contract: ${formatIssues(outCheck.issues)}`,
      );
    }
    const late = lateDigests.length > 0 ? Promise.all(lateDigests).then((ds) => ds.filter((d): d is Digest => d !== undefined)) : undefined;
    return { ok: true, output, warnings, artifacts, ...(late ? { later: late } : {}) };
  } catch (err) {
    return { ok: false, error: stepErrorOf(err, controller.signal, o.mask), warnings };
  } finally {
    open = false;
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', cancel);
  }
}

/**
 * The input the tool receives. In a step with the `secrets` capability, every secret input whose
 * reference the journaled input mentions is resolved and the arguments are evaluated again with the
 * values; the values join the run's mask set first, so nothing written later can show them.
 */
async function withSecrets(o: LiveSourceOptions, step: StepSpec, request: AttemptRequest): Promise<unknown> {
  if (!step.capabilities.includes('secrets')) return request.input;
  const texts = [...stringLeaves(request.input)];
  const values: Record<string, unknown> = {};
  for (const [name, contract] of Object.entries(o.spec.inputs)) {
    const ref = o.inputs[name];
    if (!contract.secret || typeof ref !== 'string' || !texts.some((t) => mentionsRef(t, ref))) continue;
    if (!o.secrets) {
      throw new FlowError('secret_not_found', `[flowctl] [run] step "${step.id}" needs ${ref}, but the engine has no secret store`);
    }
    const value = await o.secrets.resolve(ref);
    o.mask.add(value);
    values[name] = value;
  }
  if (Object.keys(values).length === 0) return request.input;
  return evaluateValue(step.args, { inputs: { ...o.inputs, ...values }, steps: request.scope.steps });
}

function jsonCopy(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** The tool's result as plain JSON (undefined becomes null); anything else breaks the contract. */
function toJson(value: unknown, stepId: string): unknown {
  if (value === undefined) return null;
  // Deeper than this, some serialiser that reads the run back (JSON.stringify, structuredClone) could
  // run out of stack: refuse it here, so a stored run always stays readable.
  if (jsonDepthExceeds(value, MAX_STORED_DEPTH)) {
    throw new FlowError(
      'output_contract_violation',
      `[flowctl] [run] step "${stepId}": output is nested deeper than ${MAX_STORED_DEPTH} levels of arrays and objects`,
    );
  }
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch (err) {
    throw new FlowError('output_contract_violation', `[flowctl] [run] step "${stepId}": output is not JSON (${(err as Error).message})`);
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Tool FlowErrors keep their code (retryable when `data.retryable === true`); anything else thrown
 * is `tool_error`, retryable (third-party failures are usually transient). Once the attempt's
 * signal aborted, its reason (step_timeout or canceled) decides.
 */
function stepErrorOf(err: unknown, signal: AbortSignal, mask: SecretMask): StepError {
  const reason: unknown = signal.aborted ? signal.reason : err;
  if (isFlowError(reason)) return { code: reason.code, message: mask.maskString(reason.message), retryable: isRetryableError(reason) };
  return { code: 'tool_error', message: mask.maskError(reason), retryable: true };
}

/** An artifact of ArtifactSink.later still coming. */
interface LateArtifact {
  digest: Promise<Digest | undefined>;
  hurry?: () => void;
}

/** How long a late artifact's bytes may take after the call before they are dropped (with a warning). */
export const LATE_ARTIFACT_MAX_MS = 5000;

/** The late bytes, or undefined (warned) when they failed or did not come within LATE_ARTIFACT_MAX_MS. */
function withinLateBound(bytes: Promise<Uint8Array | undefined>, o: LiveSourceOptions, stepId: string): Promise<Uint8Array | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), LATE_ARTIFACT_MAX_MS);
  });
  return Promise.race([bytes, bound]).then(
    (b) => {
      clearTimeout(timer);
      if (b !== 'late') return b;
      bytes.catch(() => {});
      o.logger.warn(`[flowctl] [run] step "${stepId}": an artifact did not come within ${LATE_ARTIFACT_MAX_MS} ms; the step lists none for it`);
      return undefined;
    },
    (err: unknown) => {
      clearTimeout(timer);
      o.logger.warn(`[flowctl] [run] step "${stepId}": an artifact could not be taken: ${o.mask.maskError(err)}`);
      return undefined;
    },
  );
}
