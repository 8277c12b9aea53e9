import { FlowError, isFlowError } from '../../../src/errors.js';
import type { StudioReplayOptions, StudioReplayStep } from '../../../src/ports/studio.js';
import { normalizeTarget, targetSchema, type TargetInput } from '../../../src/record/locator.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import type { ToolContext, ToolRegistry } from '../../../src/tools/types.js';
import { BrowserPool, type RunSession } from '../browser-pool.js';
import { actOnTarget, APPEAR_WINDOW_MS, guard, stepBudgetMs } from '../locate.js';
import { settleAfterAction } from '../settle.js';
import { createBrowserTools } from '../tools.js';

/**
 * Replay in a studio page (docs/hosted-api.md, "Re-record"): the steps of the compiled capture before
 * the one being re-recorded, run by the executor's own browser tools (tools.ts: the same locators,
 * drift rules and settling as a run) against a RunSession wrapped around the studio's page. No second
 * interpreter of ops: a step is `browser/<kind>@<version>` and its input, as the engine calls it.
 */

/** Tools the studio cannot replay: it follows one page. */
const NOT_REPLAYED: Record<string, string> = {
  'browser/switch': 'switches to another page (the studio follows one page)',
};

let registry: ToolRegistry | undefined;

/** The browser tools, once per process. Their pool is never asked for a session: the scope hands them the studio's. */
function tools(): ToolRegistry {
  registry ??= createToolRegistry(createBrowserTools({ pool: new BrowserPool({}), scopeKey: 'studio-replay', screenshots: false, defaultTimeoutMs: 30_000 }));
  return registry;
}

function failed(step: StudioReplayStep, index: number, code: string, message: string): FlowError {
  return new FlowError(
    'replay_failed',
    `[flowctl] [studio] replay stopped at step ${step.id} (${index + 1}): ${message.replace(/^(\[[^\]]+\]\s*)+/, '').split('\n')[0]}`,
    {
      data: { step: step.id, index, code },
    },
  );
}

/**
 * Why a step cannot be replayed in the studio, before anything runs; undefined when it can. An upload
 * replays only with a file source (`options.files`: the org's files), never from the service's disk.
 */
export function unreplayable(step: StudioReplayStep, options: StudioReplayOptions = {}): string | undefined {
  const at = step.tool.lastIndexOf('@');
  const ref = at > 0 ? step.tool.slice(0, at) : step.tool;
  if (NOT_REPLAYED[ref]) return NOT_REPLAYED[ref];
  if (ref === 'browser/upload' && !options.files) return 'uploads files, and this studio has no file store to read them from';
  if (step.input.opens_page === true) return 'opens a new tab or popup (the studio follows one page)';
  if (step.secret && (ref !== 'browser/fill' || step.input.frame !== undefined)) return 'puts a secret value somewhere other than a field of the page itself';
  if (!tools().resolve(ref, step.tool.slice(at + 1))) return `uses ${step.tool}, which this executor does not have`;
  return undefined;
}

/**
 * Run `steps` in the studio's session, in order; the first failure rejects with `replay_failed`. A
 * step's budget is its timeout, as in a run; `signal` ends the replay (the page closed).
 */
export async function replayInSession(session: RunSession, steps: StudioReplayStep[], signal: AbortSignal, options: StudioReplayOptions = {}): Promise<void> {
  // Refused up front: nothing runs when a step cannot.
  for (const [i, step] of steps.entries()) {
    const why = unreplayable(step, options);
    if (why) throw failed(step, i, 'not_replayable', `the step ${why}: re-record from this step instead`);
  }
  const scope = { get: async <T>() => session as unknown as T };
  for (const [i, step] of steps.entries()) {
    if (signal.aborted) throw failed(step, i, 'canceled', 'the studio session ended');
    options.onStep?.(i, step);
    const at = step.tool.lastIndexOf('@');
    const tool = tools().resolve(step.tool.slice(0, at), step.tool.slice(at + 1))!;
    const controller = new AbortController();
    const abort = () => controller.abort(new FlowError('canceled', '[flowctl] [studio] the studio session ended'));
    signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new FlowError('step_timeout', `[flowctl] [studio] step ${step.id} timed out after ${step.timeoutMs} ms`)),
      step.timeoutMs,
    );
    const ctx: ToolContext = {
      runId: 'studio',
      stepId: step.id,
      attempt: 1,
      signal: controller.signal,
      timeoutMs: step.timeoutMs,
      cwd: '/nonexistent',
      ...(options.files ? { files: options.files } : {}),
      effect: () => {},
      warn: () => {},
      scope,
      logger: { debug: () => {}, info: () => {}, warn: () => {} },
      options: { screenshots: false },
      isSecret: (text) => step.secret === true && text === step.input.value,
      ...(step.optional ? { optional: true } : {}),
    };
    try {
      if (step.secret) await mustBePasswordField(session, step, ctx);
      await guard(tool.run(structuredClone(step.input), ctx), controller.signal);
    } catch (err) {
      // An optional step whose target is absent is skipped, as a run skips it.
      if (step.optional && isFlowError(err) && err.code === 'target_absent') continue;
      const code = isFlowError(err) ? err.code : 'browser_error';
      throw failed(step, i, code, err instanceof Error ? err.message : String(err));
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    }
  }
  // The work of the last action settles, as before a run's next step.
  if (session.pending && !session.page.isClosed()) {
    const pending = session.pending;
    session.pending = undefined;
    await settleAfterAction(session.page, session.net, pending.startedBefore, 5000).catch(() => undefined);
  }
}

/** A secret goes only into a password input: located by the fill's own rules, checked before typing. */
async function mustBePasswordField(session: RunSession, step: StudioReplayStep, ctx: ToolContext): Promise<void> {
  const parsed = targetSchema.safeParse(step.input.target);
  if (!parsed.success) throw new FlowError('invalid_tool_input', '[flowctl] [studio] the fill has no valid target');
  const budget = stepBudgetMs(step.timeoutMs);
  const { value: isPassword } = await actOnTarget(session.page, normalizeTarget(parsed.data as TargetInput), ctx, {
    need: 'one',
    what: 'fill',
    deadline: Date.now() + budget,
    appearMs: APPEAR_WINDOW_MS,
    settle: async () => {
      const pending = session.pending;
      session.pending = undefined;
      const r = await settleAfterAction(session.page, session.net, pending?.startedBefore ?? session.net.started, budget);
      return !r.settled || !r.quiet;
    },
    act: (loc, timeout) => loc.evaluate((el) => el instanceof HTMLInputElement && el.type === 'password', undefined, { timeout }),
  });
  if (!isPassword) {
    throw new FlowError(
      'secret_not_shown',
      '[flowctl] [studio] the step types a secret into a field that is not a password field, so the studio would show it: re-record from this step',
    );
  }
}
