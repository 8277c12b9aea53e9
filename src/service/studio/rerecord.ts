import { canonicalJson } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import { DEFAULT_TIMEOUT_MS } from '../../flow/compile.js';
import { collectReferences, evaluateValue } from '../../flow/expr.js';
import type { AuthoringRecord, AutomationRecord } from '../../ports/service-storage.js';
import type { StudioReplayStep } from '../../ports/studio.js';
import { buildRecording } from '../../record/recording.js';
import { recordingToFlow } from '../../record/to-flow.js';
import type { ServiceDeps } from '../context.js';
import { orgSecretValues } from '../domain/publish.js';
import { serviceError } from '../errors.js';

/**
 * Re-record at a drifted step (docs/hosted-api.md, "Re-record"): the studio opened with
 * `?from_step=<step id>` replays the capture's ops before that step (compiled by the engine's own path,
 * as publish compiles them), then what the user demonstrates goes in at the step's place: the first
 * op captured replaces the drifted op, the next ones follow it, the ops after it stay.
 */

/** A FlowSpec step id of a capture: `<kind>_<n>`, n the op's 1-based position (to-flow.ts). */
export const STEP_ID = /^([a-z]+)_([1-9][0-9]{0,4})$/;

export interface RerecordPlan {
  /** The step id asked for (`click_3`). */
  step: string;
  /** Its op's 0-based index in the capture. */
  index: number;
  /** The drifted op, canonical JSON: the first op captured replaces it, if it is still there. */
  drifted: string;
  /** The ops before it, as browser tool calls, expressions resolved. */
  steps: StudioReplayStep[];
  /** The secret values the steps carry: masked out of every message to the viewer. */
  secrets: string[];
}

const slotOf = (op: unknown) => (op as { slot?: unknown })?.slot;

/**
 * The plan to re-record `step` of this capture, or a structured refusal: `invalid_request` for a step
 * that is not in the capture as named (the capture changed since the run), `secret_not_found` for a
 * secret slot the replay needs whose org secret is not set.
 */
export async function planRerecord(deps: ServiceDeps, automation: AutomationRecord, session: AuthoringRecord, step: string): Promise<RerecordPlan> {
  const m = STEP_ID.exec(step);
  if (!m) throw serviceError('invalid_request', `from_step ${JSON.stringify(step.slice(0, 40))} is not a step id of a capture (<kind>_<n>, e.g. click_3)`);
  const index = Number(m[2]) - 1;
  const ops = session.captured_ops;
  const op = ops[index] as { kind?: string } | undefined;
  if (!op) throw serviceError('invalid_request', `step ${step} is not in the capture: it has ${ops.length} operation${ops.length === 1 ? '' : 's'}`);
  if (op.kind !== m[1]) {
    throw serviceError(
      'invalid_request',
      `operation ${index + 1} of the capture is a ${String(op.kind)}, not a ${m[1]}: the capture changed since that run; re-record from its current step`,
    );
  }
  const plan: RerecordPlan = { step, index, drifted: canonicalJson(op), steps: [], secrets: [] };
  const prefix = ops.slice(0, index);
  if (prefix.length === 0) return plan;

  const used = new Set(prefix.map(slotOf).filter((s): s is string => typeof s === 'string'));
  let recording;
  try {
    recording = (
      await buildRecording({
        name: automation.name,
        task: automation.task.trim() || automation.name,
        ops: prefix,
        inputs: session.input_slots.filter((s) => used.has(s)),
        secrets: session.secret_slots.filter((s) => used.has(s)),
        readFile: async (path) => {
          const file = await deps.storage.authoring.getFile(automation.org_id, automation.id, path);
          if (!file) throw new Error(`no file "${path}" was uploaded to this authoring session`);
          return file.bytes;
        },
      })
    ).recording;
  } catch (err) {
    const why = isFlowError(err) ? err.message.replace(/^(\[[^\]]+\]\s*)+/, '') : (err as Error).message;
    throw serviceError('invalid_request', `the operations before step ${step} do not compile: ${why}`);
  }

  // Input slots replay their recorded value; secret slots the org secret of the same name.
  const inputs: Record<string, unknown> = {};
  const secretSlots = new Set<string>();
  const needed = Object.entries(recording.inputs);
  const secrets = needed.some(([, i]) => i.secret) ? await orgSecretValues(deps, deps.storage, automation.org_id) : [];
  for (const [slot, input] of needed) {
    if (!input.secret) {
      inputs[slot] = input.default ?? null;
      continue;
    }
    const found = secrets.find((s) => s.name === slot);
    if (!found)
      throw serviceError(
        'secret_not_found',
        `the replay types the secret slot "${slot}" before step ${step}, and the org secret "${slot}" is not set: set it (PUT /api/secrets/${slot}) first`,
      );
    inputs[slot] = found.value;
    secretSlots.add(slot);
    plan.secrets.push(found.value);
  }
  for (const s of recordingToFlow(recording).steps) {
    const args = s.args ?? {};
    const secret = collectReferences(args).some((r) => r.kind === 'input' && secretSlots.has(r.name));
    plan.steps.push({
      id: s.id,
      tool: s.tool,
      input: evaluateValue(args, { inputs, steps: {} }) as Record<string, unknown>,
      timeoutMs: s.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      ...(secret ? { secret: true } : {}),
      ...(s.optional ? { optional: true } : {}),
    });
  }
  return plan;
}

/** Where a live capture puts the ops it captures: at the end, or (re-record) at the drifted step. */
export interface CaptureCursor {
  /** The op the next one would follow (a navigate to the same URL right after it is not captured twice). */
  previous(ops: readonly unknown[]): unknown;
  /** The op the next one would replace, if any. */
  replacing(ops: readonly unknown[]): unknown;
  /** The capture with `op` placed; `commit` once it is stored. */
  place(ops: readonly unknown[], op: unknown): { ops: unknown[]; index: number; replaced: boolean; commit(): void };
}

export const appendCursor: CaptureCursor = {
  previous: (ops) => ops[ops.length - 1],
  replacing: () => undefined,
  place: (ops, op) => ({ ops: [...ops, op], index: ops.length, replaced: false, commit: () => {} }),
};

/**
 * The re-record cursor. Positions are kept as a number: an edit of the list during the session
 * (PATCH) that moves ops before it moves where new ops land, and the user reorders them. The drifted
 * op is replaced only while it is still at its place, unchanged; otherwise the first op is inserted.
 */
export function rerecordCursor(plan: Pick<RerecordPlan, 'index' | 'drifted'>): CaptureCursor {
  let at = plan.index;
  let drifted: string | undefined = plan.drifted;
  const slot = (ops: readonly unknown[]) => {
    const i = Math.min(at, ops.length);
    return { i, replaces: drifted !== undefined && i < ops.length && canonicalJson(ops[i]) === drifted };
  };
  return {
    previous: (ops) => ops[slot(ops).i - 1],
    replacing: (ops) => {
      const s = slot(ops);
      return s.replaces ? ops[s.i] : undefined;
    },
    place(ops, op) {
      const { i, replaces } = slot(ops);
      return {
        ops: [...ops.slice(0, i), op, ...ops.slice(i + (replaces ? 1 : 0))],
        index: i,
        replaced: replaces,
        commit() {
          at = i + 1;
          drifted = undefined;
        },
      };
    },
  };
}

/** Slots no op of `ops` uses any more are dropped (publish refuses a slot no op uses). */
export function usedSlots(ops: readonly unknown[], slots: readonly string[]): string[] {
  const used = new Set(ops.map(slotOf));
  return slots.filter((s) => used.has(s));
}

/** A message for the viewer with the replay's secret values blacked out. */
export function maskSecrets(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('•••');
  return out;
}
