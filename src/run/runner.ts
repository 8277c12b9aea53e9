import { deepFreeze, digestOf, inCanonicalForm, type Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import { evaluateCondition, evaluateValue, type ExprScope } from '../flow/expr.js';
import type { FlowSpec, StepSpec } from '../flow/types.js';
import type { Logger } from '../ports/clock.js';
import type { SecretMask } from '../secrets/mask.js';
import type { Effect } from '../tools/types.js';
import { isOutward } from './effects.js';
import type { EntryDraft } from './journal.js';
import type { JournalWriter } from './journal-writer.js';
import type { AttemptResult, StepSource } from './step-source.js';
import type { RunFinishedEntry, RunStartedEntry, StepError, ToolPin } from './types.js';

export interface RunnerOptions {
  spec: FlowSpec;
  /** Resolved inputs, secrets as references. */
  inputs: Record<string, unknown>;
  inputsDigest: Digest;
  writer: JournalWriter;
  source: StepSource;
  mask: SecretMask;
  logger: Logger;
  signal?: AbortSignal;
  replayOf?: RunStartedEntry['replay_of'];
  /** Called after run_started is stored (the engine marks the run `running`). */
  onStarted?: () => Promise<void>;
  /**
   * Store the steps' entries behind the run instead of before each next step (JournalWriter.post): a
   * live run's choice. A replay appends and waits, so a verify divergence stops it at its step.
   */
  writeBehind?: boolean;
}

export interface RunOutcome {
  status: RunFinishedEntry['status'];
  output?: unknown;
  error?: StepError & { step?: string };
  /** A failure of the machinery itself (storage, replay divergence), after the run was closed. */
  fatal?: FlowError;
}

const pinsOfFrozenSpecs = new WeakMap<FlowSpec, readonly ToolPin[]>();

/** The tool pins a FlowSpec uses, one per ref@version, sorted: recorded in run_started. */
export function contractsOf(spec: FlowSpec): ToolPin[] {
  const known = pinsOfFrozenSpecs.get(spec);
  if (known) return known as ToolPin[];
  const pins = new Map<string, ToolPin>();
  for (const step of spec.steps) {
    const pin = { contract_digest: step.tool.contract_digest, ref: step.tool.ref, version: step.tool.version };
    pins.set(`${pin.ref}@${pin.version}`, pin);
  }
  const list = [...pins.keys()].sort().map((k) => pins.get(k)!);
  // A frozen FlowSpec (the engine keeps its specs frozen) cannot change: its pins are computed once.
  if (Object.isFrozen(spec) && Object.isFrozen(spec.steps)) pinsOfFrozenSpecs.set(spec, deepFreeze(list));
  return list;
}

/**
 * Walk a FlowSpec step by step and journal everything: run_started, then per step `if` (skip),
 * argument evaluation, the confirmation before the first outward step, attempts with retries, and
 * finally the output projection and run_finished. The host never sees a tool's exception: every
 * step failure becomes a step_failed entry and a failed run. Only a failure of the machinery
 * (storage, a replay divergence) is returned as `fatal`, after the run was closed when possible.
 */
/** The error code with which a tool says an optional step's target is absent (the step is then skipped). */
export const TARGET_ABSENT = 'target_absent';
/** `step_skipped.reason` of an optional step skipped for an absent target: this, then the tool's message. */
export const OPTIONAL_SKIP_PREFIX = 'optional: target_absent: ';

export async function executeRun(o: RunnerOptions): Promise<RunOutcome> {
  const { spec, writer, source } = o;
  /** Journal a step's entry: behind the run (write-behind) or before it goes on. */
  const put = async (draft: EntryDraft | Promise<EntryDraft>): Promise<void> => {
    if (o.writeBehind) return writer.post(draft);
    await writer.append(await draft);
  };
  const scope: ExprScope = { inputs: o.inputs, steps: {} };
  let confirmed = false;
  let outcome: RunOutcome;
  try {
    await writer.append({
      event: 'run_started',
      flow_name: spec.name,
      inputs: o.inputs,
      contracts: contractsOf(spec),
      ...(o.replayOf ? { replay_of: o.replayOf } : {}),
    });
    await o.onStarted?.();
    outcome = await walk();
  } catch (err) {
    const fatal = isFlowError(err) ? err : new FlowError('internal_error', `[flowctl] [run] ${o.mask.maskError(err)}`, { cause: err });
    outcome = { status: 'failed', error: { code: fatal.code, message: o.mask.maskString(fatal.message), retryable: false }, fatal };
  }
  try {
    await source.flush?.();
    await writer.drain();
    const { fatal: _fatal, ...finished } = outcome;
    await writer.append({ event: 'run_finished', ...finished });
  } catch (err) {
    // Storage refused the last entry: the run stays unfinished in storage; report the first cause.
    outcome.fatal ??= isFlowError(err) ? err : new FlowError('internal_error', `[flowctl] [run] ${o.mask.maskError(err)}`, { cause: err });
  }
  return outcome;

  async function walk(): Promise<RunOutcome> {
    for (const step of spec.steps) {
      writer.throwIfFailed();
      const stop = stopped(step);
      if (stop) return stop;
      let input: unknown;
      try {
        if (step.if !== undefined && !evaluateCondition(step.if, scope)) {
          await put({ event: 'step_skipped', step: step.id, reason: `if: ${step.if} is false` });
          scope.steps[step.id] = { status: 'skipped' };
          continue;
        }
        input = evaluateValue(step.args, scope);
      } catch (err) {
        // Only a malformed expression throws (compile rejects those): the step fails before it starts.
        if (!isFlowError(err) || err.code === 'replay_divergence') throw err;
        const error = { code: err.code, message: o.mask.maskString(err.message), retryable: false };
        await writer.append({ event: 'step_failed', step: step.id, attempt: 1, error, will_retry: false });
        return { status: 'failed', error: { ...error, step: step.id } };
      }
      if (!confirmed && isOutward(step)) {
        // Asked once everything before it is journaled (a progress display has shown it): a line of
        // the write-behind queue must not land after, and over, the question.
        await writer.drain();
        if (!(await source.confirm(step))) {
          return {
            status: 'canceled',
            error: { code: 'effects_not_confirmed', message: '[flowctl] [run] outward effects were not confirmed; no outward step ran', retryable: false },
          };
        }
        confirmed = true;
      }
      const result = await runStep(step, input);
      if (result.skipped) {
        scope.steps[step.id] = { status: 'skipped' };
        continue;
      }
      if (!result.ok) {
        // A replay knows the cancellation from the recording (its run_finished follows this step_failed).
        const canceled = result.error.code === 'canceled' && (o.signal?.aborted || source.recordedStop?.()?.status === 'canceled');
        const status = result.ended ?? (canceled ? 'canceled' : 'failed');
        return { status, error: { ...result.error, step: step.id } };
      }
      scope.steps[step.id] = { status: 'succeeded', output: result.output };
    }
    // A replay of a run closed after its last step (recovery) ends as the original did.
    const end = source.recordedStop?.();
    if (end) return end;
    const output = spec.output === undefined ? undefined : evaluateValue(spec.output, scope);
    return { status: 'succeeded', ...(output === undefined ? {} : { output: o.mask.mask(output) }) };
  }

  function stopped(step: StepSpec): { status: 'canceled' | 'failed'; error: StepError } | undefined {
    if (source.recordedStop) return source.recordedStop();
    if (o.signal?.aborted)
      return { status: 'canceled', error: { code: 'canceled', message: `[flowctl] [run] the run was canceled before step "${step.id}"`, retryable: false } };
    return undefined;
  }

  async function runStep(step: StepSpec, args: unknown): Promise<AttemptResult & { skipped?: true }> {
    // Journaled values are kept in canonical key order: their digests and JSON then take the fast path.
    const input = inCanonicalForm(args);
    const inputDigest = digestOf(o.mask.mask(input));
    const tool = { contract_digest: step.tool.contract_digest, ref: step.tool.ref, version: step.tool.version };
    for (let attempt = 1; ; attempt++) {
      // A replay of a run closed between two attempts (recovery during a backoff) ends there too.
      const end = attempt > 1 ? source.recordedStop?.() : undefined;
      if (end) return { ok: false, error: end.error, warnings: [], ended: end.status };
      const prepared = source.prepare(step, attempt);
      await put({ event: 'step_started', step: step.id, tool, attempt, input, input_digest: inputDigest, provider: prepared.provider });
      writer.throwIfFailed();
      let index = 0;
      const effects: Promise<unknown>[] = [];
      const hooks = {
        effect: (effect: Effect) => {
          const target = o.mask.maskString(String(effect.target));
          const key = effect.idempotency_key ?? digestOf({ inputs_digest: o.inputsDigest, step: step.id, index, kind: effect.kind, target });
          index++;
          effects.push(put({ event: 'effect_recorded', step: step.id, attempt, effect: { kind: effect.kind, target, idempotency_key: key } }));
        },
      };
      const result: AttemptResult = prepared.failure
        ? { ok: false, error: prepared.failure, warnings: [] }
        : await source.attempt({ step, attempt, input, scope, signal: o.signal }, hooks);
      await Promise.all(effects);
      if (!result.ok && result.ended) return result;
      const warnings = result.warnings.length > 0 ? { warnings: result.warnings } : {};
      if (!result.ok && step.optional && result.error.code === TARGET_ABSENT) {
        // An optional step whose target never appeared: skipped, and the run goes on (docs/journal.md).
        await put({ event: 'step_skipped', step: step.id, reason: `${OPTIONAL_SKIP_PREFIX}${result.error.message}` });
        return { ...result, skipped: true };
      }
      if (result.ok) {
        const output = inCanonicalForm(o.mask.mask(result.output));
        const entry = (artifacts: Digest[]): EntryDraft => ({
          event: 'step_succeeded',
          step: step.id,
          attempt,
          output,
          output_digest: digestOf(output),
          ...warnings,
          ...(artifacts.length > 0 ? { artifacts } : {}),
        });
        // Artifacts taken after the step (a screenshot from the page's screencast): its entry waits for them, the run does not.
        const later = result.later;
        await put(later ? later.then((more) => entry([...result.artifacts, ...more])) : entry(result.artifacts));
        return { ...result, output };
      }
      const willRetry = result.error.retryable && attempt < step.retry.max_attempts && !o.signal?.aborted;
      await writer.append({ event: 'step_failed', step: step.id, attempt, error: result.error, will_retry: willRetry, ...warnings });
      if (!willRetry) return result;
      try {
        await source.backoff(Math.round(step.retry.backoff_ms * step.retry.backoff_factor ** (attempt - 1)), o.signal);
      } catch (err) {
        if (!o.signal?.aborted) throw err;
      }
      if (o.signal?.aborted) {
        return {
          ok: false,
          error: { code: 'canceled', message: `[flowctl] [run] step "${step.id}" was canceled between attempts`, retryable: false },
          warnings: [],
        };
      }
    }
  }
}
