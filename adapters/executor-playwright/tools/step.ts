import type { Page } from 'playwright-core';
import { defineTool, toolError } from '../../../src/tools/contract.js';
import type { Tool, ToolContext, ToolContract } from '../../../src/tools/types.js';
import { frameSchema, normalizeFrame, normalizeTarget, targetSchema, type FrameInput, type Locator, type TargetInput } from '../../../src/record/locator.js';
import { refusedForPage, type BrowserPool, type RunSession } from '../browser-pool.js';
import { settleAfterAction, TIMER_WAIT_MAX_MS } from '../settle.js';
import { APPEAR_WINDOW_MS, OPTIONAL_WINDOW_MS, browserError, guard, resolveFrame, stepBudgetMs, type ActOptions } from '../locate.js';
import { captureMasked, captureUnmasked, isMasked } from './capture.js';

/**
 * The frame every browser tool runs in (see docs/browser.md): the run's session and page, the step's
 * budget and settling, an opened page followed, egress refusals checked, the screenshot after.
 */

export interface BrowserToolsConfig {
  pool: BrowserPool;
  /** Scope key of this executor's run session (unique per executor instance). */
  scopeKey: string;
  /** Screenshots after each successful step unless `ctx.options.screenshots` says otherwise. */
  screenshots: boolean;
  /** Used when a step carries no positive timeout. */
  defaultTimeoutMs: number;
  /** The appear window of locator drift (default APPEAR_WINDOW_MS). */
  appearTimeoutMs?: number;
  /** The appear window of an optional step, after which it is skipped (default OPTIONAL_WINDOW_MS). */
  optionalWindowMs?: number;
}

export const COMPONENT = 'executor-playwright';

function session(ctx: ToolContext, cfg: BrowserToolsConfig): Promise<RunSession> {
  return ctx.scope.get(
    cfg.scopeKey,
    () => cfg.pool.openSession(ctx.runId, ctx.egress),
    async (s) => {
      // The run's last action succeeded: let what it started (a form post, its follow-up requests) finish.
      if (s.pending && !s.page.isClosed()) await settleAfterAction(s.page, s.net, s.pending.startedBefore, CLOSE_SETTLE_MS).catch(() => {});
      await cfg.pool.closeSession(s);
    },
  );
}

function parseFrame(value: unknown): Locator[] {
  const parsed = frameSchema.safeParse(value);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${['frame', ...i.path].join('.')} ${i.message}`).join('; ');
    throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] ${msg}`, { retryable: false });
  }
  return normalizeFrame(parsed.data as FrameInput);
}

export function parseTarget(value: unknown, field: string): Locator {
  const parsed = targetSchema.safeParse(value);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${[field, ...i.path].join('.')} ${i.message}`).join('; ');
    throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] ${msg}`, { retryable: false });
  }
  return normalizeTarget(parsed.data as TargetInput);
}

/** `http://host:port` of the page, or `about:blank` before any navigation. */
export function pageOrigin(page: Page): string {
  const url = new URL(page.url());
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `${url.protocol}${url.pathname}`;
}

/** What a step's body needs to locate targets: its deadline, the appear window, and how to settle the page. */
export type Step = Pick<ActOptions<unknown>, 'deadline' | 'appearMs' | 'settle' | 'root'> & {
  /** Milliseconds left of the step's budget (at least 1). */
  remaining(): number;
};

function stepOf(ctx: ToolContext, cfg: BrowserToolsConfig, s: RunSession): Step {
  const timeout = Number.isFinite(ctx.timeoutMs) && ctx.timeoutMs > 0 ? ctx.timeoutMs : cfg.defaultTimeoutMs;
  const deadline = Date.now() + stepBudgetMs(timeout);
  const remaining = () => Math.max(1, deadline - Date.now());
  return {
    deadline,
    remaining,
    appearMs: ctx.optional ? (cfg.optionalWindowMs ?? OPTIONAL_WINDOW_MS) : (cfg.appearTimeoutMs ?? APPEAR_WINDOW_MS),
    // The work of earlier actions finishes before a drift decision. With none pending, the page is as
    // the last settle (navigate, a read, a decision) left it, and only a change of its own is settled.
    settle: async (afterChange) => (s.pending || afterChange ? settlePending(s, ctx, remaining()) : false),
  };
}

/**
 * Settle the page (settle.ts): the work of the pending action, if any, and whatever is under way.
 * Resolves false when there was nothing to wait for. A bound that ran out is logged against the
 * action whose work it was, and the step goes on.
 */
export async function settlePending(s: RunSession, ctx: ToolContext, boundMs: number): Promise<boolean> {
  const pending = s.pending;
  s.pending = undefined;
  const settled = await settleAfterAction(s.page, s.net, pending?.startedBefore ?? s.net.started, boundMs);
  if (settled.settled) return !settled.quiet;
  if (pending) {
    const what = settled.waitingFor === 'requests' ? `requests still in flight after ${boundMs} ms` : `timers still pending after ${TIMER_WAIT_MAX_MS} ms`;
    ctx.logger.debug(`[flowctl] [browser] ${pending.action}: ${what}; going on`);
  }
  return true;
}

/** Bound on settling the last action's work when a run's page closes. */
export const CLOSE_SETTLE_MS = 5000;

function screenshotsOn(ctx: ToolContext, cfg: BrowserToolsConfig): boolean {
  const enabled = typeof ctx.options?.screenshots === 'boolean' ? ctx.options.screenshots : cfg.screenshots;
  return enabled && ctx.artifacts !== undefined;
}

/**
 * The picture after a step (docs/browser.md, "Screenshots"): a JPEG of the page as the step left it,
 * secret fields blacked out before anything is stored. On a page with nothing to mask, the capture is
 * requested as the step ends and neither it nor its store is waited for: the step's journal entry
 * waits for the picture, the run goes on (ArtifactSink.later). A page with a password input or a
 * secret-filled field is captured at once with the masks painted in (capture.ts).
 */
async function screenshot(s: RunSession, ctx: ToolContext, cfg: BrowserToolsConfig, unchanged: boolean): Promise<void> {
  if (!screenshotsOn(ctx, cfg)) return;
  const sink = ctx.artifacts!;
  let jpeg: Buffer | undefined;
  try {
    // A read that changed nothing (nothing to settle, nothing awaited) shows the page of the picture
    // before it. That one had nothing to mask (a masked picture is never reused), so the page is not asked again.
    const last = lastShot.get(s);
    if (unchanged && sink.later && last?.page === s.page) return sink.later(last.bytes, 'image/jpeg');
    const masked = await guard(isMasked(s), ctx.signal);
    if (!masked && sink.later) {
      const bytes = captureUnmasked(s, SCREENSHOT_QUALITY);
      lastShot.set(s, { page: s.page, bytes });
      return sink.later(bytes, 'image/jpeg');
    }
    lastShot.delete(s);
    jpeg = await guard(masked ? captureMasked(s, SCREENSHOT_QUALITY) : captureUnmasked(s, SCREENSHOT_QUALITY), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.logger.warn(`[${COMPONENT}] screenshot failed: ${(err as Error).message.split('\n')[0]}`);
    return;
  }
  // A failed write is logged by the run (it warns and goes on); nothing here waits for it.
  if (jpeg) sink.put(new Uint8Array(jpeg), 'image/jpeg').catch(() => {});
}

/** The last picture requested of each run session's page (reused by a read that changed nothing). */
const lastShot = new WeakMap<RunSession, { page: Page; bytes: Promise<Buffer | undefined> }>();

/** JPEG quality of step screenshots: at 50 a 1280 x 720 page is about 35 KB, its text still crisp. */
export const SCREENSHOT_QUALITY = 50;

/**
 * How a step relates to settling (docs/browser.md, "Waiting"): an `action` leaves work to settle later;
 * a `read` settles the work of the actions before it first; a `wait` waits for its own condition and
 * settles nothing (it is for what settling cannot know).
 */
type StepMode = 'action' | 'read' | 'wait' | 'switch';

/** A browser step: open the run's page, report the browser effect, act, then screenshot if enabled. */
export function browserTool<I, O>(
  contract: ToolContract,
  cfg: BrowserToolsConfig,
  body: (input: I, s: RunSession, ctx: ToolContext, step: Step) => Promise<O>,
  mode: StepMode = 'action',
): Tool {
  const name = contract.ref.slice('browser/'.length);
  return defineTool<I, O>(contract, async (input, ctx) => {
    const s = await session(ctx, cfg);
    const step = stepOf(ctx, cfg, s);
    if (mode !== 'switch' && s.page.isClosed()) {
      const index = s.pages.findIndex((p) => p.page === s.page);
      throw toolError(
        'page_closed',
        `[flowctl] [${COMPONENT}] ${name}: the run's current page (page ${index}) has closed (a popup that closed itself?); a switch step goes on in another page`,
        {
          retryable: false,
          data: { page: index },
        },
      );
    }
    // `opens_page`: the action opens a new tab or popup; listen before acting, so none is missed.
    const popup = (input as { opens_page?: unknown }).opens_page === true ? s.context.waitForEvent('page', { timeout: step.remaining() }) : undefined;
    popup?.catch(() => {});
    // `frame`: every target of the step is located in that iframe's content (nested: outermost first).
    const frame = (input as { frame?: unknown }).frame;
    if (frame !== undefined) step.root = await resolveFrame(s.page, parseFrame(frame), ctx, { ...step, what: name });
    // Where a careful script waits (docs/browser.md, "Waiting"): a read first lets the work of the
    // actions before it settle, so it sees what they caused; an action acts on its target as soon as
    // that is unambiguous, and its own work is settled later: before the next read, drift decision,
    // screenshot or the run's end. A navigation settles at once (the page it opens must be ready).
    // A read with nothing to settle before it and nothing it waited for changed nothing on the page.
    let unchanged = mode === 'read' && !(s.pending && (await settlePending(s, ctx, step.remaining())));
    if (unchanged) {
      const settle = step.settle;
      step.settle = async (afterChange) => {
        const waited = await settle(afterChange);
        if (waited || afterChange) unchanged = false;
        return waited;
      };
    }
    const startedBefore = s.pending?.startedBefore ?? s.net.started;
    if (s.egress) s.egress.deniedNavigation = undefined;
    let out: O;
    try {
      out = await body(input, s, ctx, step);
    } catch (err) {
      // A failed step ends or retries the run: nothing is left to settle at the close.
      s.pending = undefined;
      // The step failed because the egress guard refused its navigation: say so.
      throw s.egress?.deniedNavigation?.error ?? err;
    }
    if (mode === 'action') s.pending = { action: s.pending?.action ?? name, startedBefore };
    if (popup) {
      out = { ...out, opened: await followOpenedPage(s, ctx, cfg, step, popup, name) };
    } else if (s.page.isClosed()) {
      // The action closed its own page (a popup's "Done"): nothing is left to settle or to picture.
      s.pending = undefined;
      return out;
    }
    if (name === 'navigate') await settlePending(s, ctx, step.remaining());
    if (s.egress) checkRefusals(s, ctx);
    await screenshot(s, ctx, cfg, unchanged);
    return out;
  });
}

/**
 * After an action with `opens_page`: the page it opened (a new tab or popup of the run's context)
 * becomes the current page, the next in opening order. The work the action left on the page it came
 * from is settled first (bounded), then the new page is awaited to its load event and settled, as
 * after navigate. No page within the step's budget: `no_page_opened` (the action itself happened).
 */
async function followOpenedPage(
  s: RunSession,
  ctx: ToolContext,
  cfg: BrowserToolsConfig,
  step: Step,
  popup: Promise<Page>,
  name: string,
): Promise<{ page: number; url: string }> {
  let page: Page;
  try {
    page = await guard(popup, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    s.pending = undefined;
    throw toolError('no_page_opened', `[flowctl] [${COMPONENT}] ${name}: the action opened no new page within the step's budget (opens_page: true)`, {
      retryable: false,
    });
  }
  // Its requests are tracked from now on, before anything is awaited: a page's own fetches start as
  // its scripts run, and settling it below must see them.
  const index = cfg.pool.followPage(s, page);
  if (!s.page.isClosed() && s.pending) await settlePending(s, ctx, Math.min(CLOSE_SETTLE_MS, step.remaining()));
  s.pending = undefined;
  await cfg.pool.setCurrentPage(s, index);
  try {
    await guard(page.waitForLoadState('load', { timeout: step.remaining() }), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw browserError(err, `${name}: the page it opened`);
  }
  if (pageOrigin(page) !== 'about:blank') ctx.effect({ kind: 'browser', target: pageOrigin(page) });
  s.pending = { action: name, startedBefore: 0 };
  await settlePending(s, ctx, step.remaining());
  return { page: index, url: page.url() };
}

/** The same body under several contracts (the versions of one tool). */
export function browserTools<I, O>(
  contracts: ToolContract[],
  cfg: BrowserToolsConfig,
  body: (input: I, s: RunSession, ctx: ToolContext, step: Step) => Promise<O>,
  mode: StepMode = 'action',
): Tool[] {
  return contracts.map((c) => browserTool(c, cfg, body, mode));
}

/** Egress refusals a step already reported (or that were the browser's own). */
const reported = new WeakSet<object>();

/**
 * After a step under an egress guard: a main-frame navigation the guard refused during the step (a
 * click on a link, a script, a redirect) fails it with `egress_denied`; refused subresources, fetches
 * and WebSockets leave the step a warning `egress_denied` naming them (the page got a network error).
 */
function checkRefusals(s: RunSession, ctx: ToolContext): void {
  const denied = s.egress!.deniedNavigation;
  if (denied) {
    s.pending = undefined;
    throw denied.error;
  }
  // Refusals since the last step that reported: what an action started after it returned is reported
  // by the next step. Only the page's refused requests are the step's: the browser's own traffic (a
  // default favicon, an update check) is no request of the page's, whatever the guard refused of it.
  const all = s.egress!.proxy.refusals;
  const fresh = all.filter((r) => !reported.has(r) && refusedForPage(s.egress!, r));
  for (const r of all) reported.add(r);
  if (fresh.length === 0) return;
  const targets = [...new Set(fresh.map((r) => r.target))];
  ctx.warn({
    code: 'egress_denied',
    message: `[flowctl] [${COMPONENT}] the egress guard refused ${fresh.length} request${fresh.length === 1 ? '' : 's'} of the page: ${targets.slice(0, 5).join(', ')}${targets.length > 5 ? ', ...' : ''}`,
    data: { targets: targets.slice(0, 20) },
  });
}
