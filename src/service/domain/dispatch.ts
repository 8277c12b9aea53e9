import type { Digest } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import type { FlowSpec } from '../../flow/types.js';
import type { AutomationRecord, DispatchKind, ExecutionRecord } from '../../ports/service-storage.js';
import type { JournalEntry, Run, RunFinishedEntry, StepFailedEntry } from '../../run/types.js';
import type { RunOptions } from '../../engine/types.js';
import type { FileSource } from '../../tools/types.js';
import type { ServiceDeps } from '../context.js';
import type { FinishedStatus } from '../live/run-registry.js';
import { invalidRequest, isUnavailable, serviceError, type Issue } from '../errors.js';
import { orgSecretStore } from './secrets.js';
import { followSite } from './site-status.js';
import { emitWebhookEvent } from './webhooks.js';
import { crashPoint } from '../crash-points.js';

/**
 * Dispatch of a run of an automation's live version (docs/hosted-api.md, "Run gateway"): the rules
 * every caller shares (gateway, MCP, schedules), the engine run by digest with the org's secret
 * store, the executions index row, and drift.
 */

export interface Dispatchable {
  automation: AutomationRecord;
  digest: Digest;
  spec: FlowSpec;
}

/**
 * The automation `name` of the org that a key may run: published (or failing), and within the key's
 * scope. One `undefined` for unknown, draft and out-of-scope names (one 404 for the caller).
 */
export async function runnableAutomation(
  deps: ServiceDeps,
  orgId: string,
  name: string,
  scope: readonly string[] | undefined,
): Promise<Dispatchable | undefined> {
  const automation = await deps.storage.automations.getByName(orgId, name);
  if (!automation || automation.status === 'draft' || !automation.live_digest) return undefined;
  if (scope !== undefined && !scope.includes(name)) return undefined;
  const resolved = await deps.engine?.resolve({ digest: automation.live_digest as Digest });
  return resolved ? { automation, digest: resolved.digest, spec: resolved.spec } : undefined;
}

export const secretInputsOf = (spec: FlowSpec): string[] =>
  Object.entries(spec.inputs ?? {})
    .filter(([, c]) => (c as { secret?: boolean }).secret === true)
    .map(([n]) => n);

/**
 * The gateway body shape `{inputs?}` (the gateway and the capture test): any other top-level key is
 * refused, 422 `invalid_request` with an issue naming `inputs`, before anything runs. A body of
 * inputs at the top level (`{"category": "veg"}`, the engine launcher's style) would otherwise run
 * with the defaults and answer a wrong result as success (issue 26).
 */
export function gatewayBodyInputs(body: unknown): unknown {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw invalidRequest([{ path: [], message: 'the body must be a JSON object {"inputs": {...}}', code: 'invalid_type' }]);
  }
  const extra = Object.keys(body).filter((k) => k !== 'inputs');
  if (extra.length > 0) {
    throw invalidRequest(
      extra.slice(0, 20).map((k) => ({
        path: [k],
        message: `unknown key "${k.slice(0, 64)}": the body is {"inputs": {...}}; the automation's inputs go under "inputs" (e.g. {"inputs": {"${k.slice(0, 64)}": ...}})`,
        code: 'unrecognized_key',
      })),
    );
  }
  return (body as { inputs?: unknown }).inputs;
}

/** Inputs as a caller sends them: an object, never a secret input. */
export function checkCallerInputs(spec: FlowSpec, inputs: unknown): Record<string, unknown> {
  if (inputs === undefined || inputs === null) return {};
  if (typeof inputs !== 'object' || Array.isArray(inputs))
    throw invalidRequest([{ path: ['inputs'], message: "must be an object of the automation's inputs by name", code: 'invalid_type' }]);
  const secret = secretInputsOf(spec).filter((n) => n in (inputs as object));
  if (secret.length > 0) {
    throw invalidRequest(
      secret.map((n) => ({
        path: ['inputs', n],
        message: `"${n}" is a secret input: it is never sent; it resolves from the org secret of the same name`,
        code: 'secret_input',
      })),
    );
  }
  return inputs as Record<string, unknown>;
}

/**
 * Why a run failed: the journal's last `step_failed` (the spec's projection), else the error its
 * `run_finished` carries (a run ended by recovery, `worker_lost`, has no failed step).
 */
export function failureOf(run: Run): { step: string | null; code: string; message: string } {
  const failed = [...run.journal].reverse().find((e): e is StepFailedEntry => e.event === 'step_failed');
  if (failed) return { step: failed.step, code: failed.error.code, message: failed.error.message };
  const finished = [...run.journal].reverse().find((e): e is RunFinishedEntry => e.event === 'run_finished');
  if (finished?.error) return { step: finished.error.step ?? null, code: finished.error.code, message: finished.error.message };
  return { step: null, code: 'run_failed', message: 'the run failed' };
}

/** The run result of the spec: `error` from the journal's last `step_failed` entry. */
export function runResult(run: Run) {
  return {
    run_id: run.id,
    status: run.status,
    flow_digest: run.flow_digest,
    output: run.status === 'succeeded' ? (run.output ?? null) : null,
    ...(run.status === 'failed' ? { error: failureOf(run) } : {}),
  };
}

function engineIssues(err: unknown): Issue[] {
  const data = (err as { data?: unknown }).data as { issues?: { path?: unknown; message?: string; code?: string }[] } | unknown[] | undefined;
  const list = Array.isArray(data) ? data : ((data as { issues?: unknown[] } | undefined)?.issues ?? []);
  return (list as { path?: unknown; instancePath?: string; message?: string; code?: string }[]).map((i) => ({
    path: [
      'inputs',
      ...(Array.isArray(i.path)
        ? i.path
        : typeof i.path === 'string'
          ? i.path.split('.').filter(Boolean)
          : typeof i.instancePath === 'string'
            ? i.instancePath.split('/').filter(Boolean)
            : []),
    ],
    message: i.message ?? 'invalid',
    code: i.code ?? 'invalid_inputs',
  }));
}

/** The executions index row of a run of `target`, as the dispatch that starts it writes it. */
function executionRow(
  deps: ServiceDeps,
  target: Dispatchable,
  runId: string,
  via: { kind: DispatchKind; keyId?: string },
  status: 'queued' | 'running',
): ExecutionRecord {
  const { automation } = target;
  return {
    id: deps.ids.uuid(),
    org_id: automation.org_id,
    automation_id: automation.id,
    flow: automation.name,
    run_id: runId,
    flow_digest: target.digest,
    dispatch: via.kind,
    ...(via.keyId ? { key_id: via.keyId } : {}),
    status,
    created_at: deps.clock.now(),
  };
}

/** The queue of hosted runs (one message per queued run: `{execution_id, org_id}`). */
export const RUN_QUEUE = 'flowctl-runs';

/**
 * The upload files runs of an org read (RunOptions.files): that org's stored files, by digest (the
 * step's `digest`, else the `<hex>` folder of a recorded path `…/<hex>/<name>`). Nothing is read from
 * the service's disk, and another org's files are never found.
 */
const RECORDED_FILE = /(?:^|\/)([0-9a-f]{64})\/[^/]+$/;

export function orgFileSource(deps: ServiceDeps, orgId: string): FileSource {
  return {
    async read(file) {
      const hex = RECORDED_FILE.exec(file.path)?.[1];
      const digest = file.digest ?? (hex ? `sha256:${hex}` : undefined);
      if (digest === undefined || !/^sha256:[0-9a-f]{64}$/.test(digest)) return undefined;
      return deps.storage.authoring.fileByDigest(orgId, digest);
    },
  };
}

/** What every run of an org gets: its secret store and its upload files. */
export const orgRunOptions = (deps: ServiceDeps, orgId: string): Pick<RunOptions, 'secrets' | 'files'> => ({
  secrets: orgSecretStore(deps, deps.storage, orgId),
  files: orgFileSource(deps, orgId),
});

function inputError(err: unknown): unknown {
  if (isFlowError(err, 'invalid_inputs'))
    return invalidRequest(
      engineIssues(err).length ? engineIssues(err) : [{ path: ['inputs'], message: err.message.replace(/^(\[[^\]]+\]\s*)+/, ''), code: 'invalid_inputs' }],
    );
  if (isFlowError(err, 'secret_not_found'))
    return serviceError('secret_not_found', `${err.message.replace(/^(\[[^\]]+\]\s*)+/, '')}; an owner sets it with PUT /api/secrets/{name}`);
  return err;
}

/** Whether runs of this service go to the queue (`SVC_RUN_DISPATCH=queue` with a queue wired in). */
export const queueDispatch = (deps: ServiceDeps): boolean => deps.settings.runDispatch === 'queue';

/**
 * Queue dispatch (docs/hosted-api.md, "Queue dispatch"): the run is prepared in the engine (inputs
 * validated, status `pending`), indexed as `queued`, and one message `{execution_id, org_id}` goes
 * to the run queue; a worker executes it (src/service/worker.ts). On a SQL storage the three writes
 * commit in one transaction: a crash or a lost database between them leaves none of them. When the
 * message cannot be stored nothing is kept and the caller gets 503 `queue_unavailable`.
 */
export async function enqueueRun(
  deps: ServiceDeps,
  target: Dispatchable,
  inputs: Record<string, unknown>,
  via: { kind: DispatchKind; keyId?: string },
): Promise<ExecutionRecord> {
  const { automation } = target;
  const engine = deps.engine;
  const queue = deps.queue;
  if (!engine || !queue) throw serviceError('not_ready', 'this service has no engine or queue to run automations');
  const message = (execution: ExecutionRecord) => ({ execution_id: execution.id, org_id: execution.org_id });
  const unavailable = (runId: string, err: unknown) => {
    deps.logger.error(`[flowctl] [service] cannot enqueue run ${runId}: ${(err as Error)?.message ?? String(err)}`);
    return serviceError('queue_unavailable', 'the run queue is unavailable; the run was not started, try again');
  };
  const atomic = deps.storage.engineTransaction?.bind(deps.storage);
  let execution: ExecutionRecord | undefined;
  if (atomic) {
    // The queue exists before the transaction opens (creating it inside would wait on the queue's
    // own connection; on PGlite, one connection, that waits for this transaction).
    await queue.ensure(RUN_QUEUE).catch((err: unknown) => {
      throw unavailable('(not prepared)', err);
    });
  }
  let prepared;
  try {
    // The start deadline stays as a last resort (a message dropped after its retries, a run from a
    // version that wrote them apart): recovery ends a run nothing started by then; the orphan sweep
    // of the workers (domain/orphans.ts) ends one without a message much sooner.
    prepared = await engine.prepare({ digest: target.digest }, inputs, {
      secrets: orgSecretStore(deps, deps.storage, automation.org_id),
      startWithinMs: deps.settings.queueTimeoutSeconds * 1000,
      ...(atomic
        ? {
            // The run record, its execution row and its message: one transaction, all or nothing.
            store: (record) =>
              atomic(async (tx) => {
                await tx.engineRuns.create(record);
                const row = executionRow(deps, target, record.id, via, 'queued');
                await tx.executions.create(row);
                try {
                  await queue.send(RUN_QUEUE, message(row), { transaction: tx.sql });
                } catch (err) {
                  throw unavailable(record.id, err);
                }
                crashPoint('enqueue-before-commit');
                execution = row;
              }),
          }
        : {}),
    });
  } catch (err) {
    throw inputError(err);
  }
  if (execution) return execution;
  // A storage without a shared transaction: the writes one after the other, undone on a failed send.
  const row: ExecutionRecord = executionRow(deps, target, prepared.run_id, via, 'queued');
  await deps.storage.executions.create(row);
  try {
    await queue.send(RUN_QUEUE, message(row));
  } catch (err) {
    await engine.cancel(prepared.run_id).catch(() => undefined);
    await deps.storage.executions
      .update(row.org_id, row.id, { status: 'failed', finished_at: deps.clock.now(), error_code: 'queue_unavailable' })
      .catch(() => undefined);
    throw unavailable(prepared.run_id, err);
  }
  return row;
}

/**
 * Run the live version in this process and resolve with the finished run (sync dispatch). The
 * execution row is written as soon as the engine run exists (onRunId), alongside the run's first
 * steps, and its outcome once it ends; no watch or re-read of the run is needed.
 */
export async function runSync(
  deps: ServiceDeps,
  target: Dispatchable,
  inputs: Record<string, unknown>,
  via: { kind: DispatchKind; keyId?: string },
  hooks: Pick<RunOptions, 'onEntry'> & { onRunId?: (runId: string, execution: ExecutionRecord) => void } = {},
): Promise<Run> {
  const { automation } = target;
  const engine = deps.engine;
  if (!engine) throw serviceError('not_ready', 'this service has no engine to run automations');
  let execution: ExecutionRecord | undefined;
  let created: Promise<void> | undefined;
  let run: Run | undefined;
  try {
    try {
      run = await engine.run({ digest: target.digest }, inputs, {
        ...orgRunOptions(deps, automation.org_id),
        ...(hooks.onEntry ? { onEntry: hooks.onEntry } : {}),
        onRunId: (runId) => {
          execution = executionRow(deps, target, runId, via, 'running');
          created = deps.storage.executions.create(execution);
          created.catch(() => undefined);
          // The run live view (src/service/live/run-live.ts) finds it from now until it ends.
          deps.liveRuns?.started({
            run_id: runId,
            execution_id: execution.id,
            org_id: execution.org_id,
            automation_id: execution.automation_id,
            dispatch: via.kind,
            started_at: execution.created_at,
          });
          hooks.onRunId?.(runId, execution);
        },
      });
    } catch (err) {
      await created?.catch(() => undefined);
      // The database went away under the run: the engine leaves it to recovery, and the reconcile sweep
      // records the end it gets (docs/deploy.md, "Database outage"); a row written `failed` here would
      // disagree with it.
      if (execution && !isUnavailable(err)) {
        const code = isFlowError(err) ? err.code : 'run_failed';
        await deps.storage.executions
          .update(execution.org_id, execution.id, { status: 'failed', finished_at: deps.clock.now(), error_code: code })
          .catch(() => undefined);
      }
      throw inputError(err);
    }
    await created;
    if (execution) await recordOutcome(deps, execution, run);
    return run;
  } finally {
    // After the outcome is recorded, so a viewer told `run_finished` reads the finished execution.
    const ended = execution as ExecutionRecord | undefined;
    if (ended) deps.liveRuns?.finished(ended.run_id, finishedStatus(run));
  }
}

/** What the run live view is told a run ended as: its status, or `failed` for a run that threw. */
const finishedStatus = (run: Run | undefined): FinishedStatus => (run?.status === 'succeeded' || run?.status === 'canceled' ? run.status : 'failed');

/** Start the live version; the execution row exists from the moment the engine run does. */
export async function startRun(
  deps: ServiceDeps,
  target: Dispatchable,
  inputs: Record<string, unknown>,
  via: { kind: DispatchKind; keyId?: string },
): Promise<ExecutionRecord> {
  const { automation } = target;
  const engine = deps.engine;
  if (!engine) throw serviceError('not_ready', 'this service has no engine to run automations');
  let started;
  try {
    started = await engine.start({ digest: target.digest }, inputs, orgRunOptions(deps, automation.org_id));
  } catch (err) {
    throw inputError(err);
  }
  const execution: ExecutionRecord = executionRow(deps, target, started.run_id, via, 'running');
  await deps.storage.executions.create(execution);
  // It executes in this process: the run live view shows it until finishRun records its end.
  deps.liveRuns?.started({
    run_id: execution.run_id,
    execution_id: execution.id,
    org_id: execution.org_id,
    automation_id: execution.automation_id,
    dispatch: via.kind,
    started_at: execution.created_at,
  });
  return execution;
}

/** Wait for the run to end (its journal's `run_finished`), then record the outcome. */
export async function finishRun(deps: ServiceDeps, execution: ExecutionRecord, signal?: AbortSignal): Promise<Run> {
  const engine = deps.engine!;
  for await (const entry of engine.watch(execution.run_id, signal ? { signal } : {})) {
    if ((entry as JournalEntry).event === 'run_finished') break;
  }
  const run = (await engine.getRun(execution.run_id))!;
  await recordOutcome(deps, execution, run);
  // After the outcome is recorded, as for sync runs (a run this process does not show is not there).
  deps.liveRuns?.finished(execution.run_id, finishedStatus(run));
  return run;
}

/**
 * The end of a run, into the index and the automation: status and error code on the execution row;
 * a failure with `locator_drift` on the live version marks the automation `failing` with the
 * drifted step; a success of the live version puts it back, or marks it degraded when a step needed a
 * fallback locator (site-status.ts; docs/hosted-api.md, "Drift").
 */
export async function recordOutcome(deps: ServiceDeps, execution: ExecutionRecord, run: Run): Promise<void> {
  const failed = [...run.journal].reverse().find((e): e is StepFailedEntry => e.event === 'step_failed');
  const errorCode = run.status === 'failed' ? failureOf(run).code : undefined;
  if (run.status !== 'succeeded' && run.status !== 'failed' && run.status !== 'canceled') return;
  const moved = await deps.storage.executions.finish(execution.org_id, execution.id, {
    status: run.status,
    ...(run.finished_at ? { finished_at: run.finished_at } : {}),
    ...(errorCode ? { error_code: errorCode } : {}),
  });
  let becameFailing = false;
  if (errorCode === 'locator_drift' && failed) {
    const current = await deps.storage.automations.get(execution.org_id, execution.automation_id);
    if (current && current.live_digest === execution.flow_digest) {
      becameFailing = current.status !== 'failing';
      await deps.storage.automations.update(execution.org_id, execution.automation_id, { status: 'failing', needs_attention: true, failing_step: failed.step });
    }
  }
  // A succeeded run of the live version: the status follows the site (recovered, or degraded).
  if (run.status === 'succeeded' && moved) await followSite(deps, execution, run);
  // Webhooks, once per run: only the call that moved the row to its terminal status emits (a
  // duplicate delivery or a second recording of the same end does not).
  if (deps.queue && moved) {
    const data = {
      execution_id: execution.id,
      run_id: run.id,
      automation_id: execution.automation_id,
      automation: execution.flow,
      flow_digest: execution.flow_digest,
      dispatch: execution.dispatch,
      status: run.status,
      finished_at: run.finished_at ?? null,
      ...(run.status === 'succeeded' ? { output: run.output ?? null } : {}),
      ...(run.status === 'failed' ? { error: failureOf(run) } : {}),
    };
    await emitWebhookEvent(deps, execution.org_id, 'run.finished', data);
    if (run.status === 'failed') await emitWebhookEvent(deps, execution.org_id, 'run.failed', data);
    if (becameFailing && failed) {
      await emitWebhookEvent(deps, execution.org_id, 'automation.failing', {
        automation_id: execution.automation_id,
        automation: execution.flow,
        flow_digest: execution.flow_digest,
        failing_step: failed.step,
        run_id: run.id,
        execution_id: execution.id,
      });
    }
  }
}
