import type { FrameLocator, Locator as PwLocator, Page } from 'playwright-core';
import { isFlowError } from '../../src/errors.js';
import { toolError } from '../../src/tools/contract.js';
import type { ToolContext } from '../../src/tools/types.js';
import { describeStrategy, strategiesOf, type Locator, type LocatorStrategy } from '../../src/record/locator.js';
import { firstLine } from './launch.js';

/**
 * Locator drift, decided on the settled page (docs/browser.md, "Locator drift").
 *
 * 1. Probe: the primary is counted (`count()`, no waiting). When it matches as needed (exactly one
 *    element, or at least one for `need: 'some'`), the op runs on it at once, with Playwright's
 *    actionability waits bounded by the step's budget. Its fallbacks are not counted then: a role,
 *    text or label locator walks the whole page (about 35 ms for three of them on a page of 8,000
 *    elements, here), and a recorded target usually has several.
 * 2. Otherwise the page is settled (the work the previous action started: settle.ts) and every
 *    candidate (the primary, then its fallbacks) is counted at once. The first that matches as
 *    needed, primary first, gets the op: a fallback with a `drift` warning that lists every locator
 *    and its count.
 * 3. When none matches, the page gets a short appear window (APPEAR_WINDOW_MS from the settle) for one
 *    to turn up: it waits for the page to change (Playwright's waitFor on the candidates `or`-ed
 *    together, or a DOM mutation when something matched but not as needed), settles, counts again.
 *    Still none: FlowError `locator_drift` with every locator and its count.
 * No fixed sleeps and no share of the budget: every wait ends on an event or on a bound.
 * An op is never repeated once it began (a timeout after the action started is `browser_timeout`).
 */

/** How long a target may take to appear once the page settled, when no candidate matched. */
export const APPEAR_WINDOW_MS = 2000;

/**
 * The appear window of an optional step (StepSpec `optional`): when no candidate matches anything
 * within it, the step fails `target_absent` and the run skips it (docs/browser.md, "Optional steps").
 */
export const OPTIONAL_WINDOW_MS = 1500;

/** A step's budget for the op: its timeout less a reserve (10%, at most 1 s) to report the diagnosis in time. */
export function stepBudgetMs(timeoutMs: number): number {
  const reserve = Math.min(1000, Math.floor(timeoutMs * 0.1));
  return Math.max(1, timeoutMs - reserve);
}

/** Where locators are resolved: the page, or an iframe's content (docs/recordings.md, `frame`). */
export type LocatorRoot = Page | FrameLocator;

export function toPlaywright(root: LocatorRoot, s: LocatorStrategy): PwLocator {
  if (s.css !== undefined) return root.locator(s.css);
  if (s.testid !== undefined) return root.getByTestId(s.testid);
  if (s.role !== undefined) {
    return root.getByRole(s.role as Parameters<Page['getByRole']>[0], s.name === undefined ? {} : { name: s.name, exact: true });
  }
  if (s.text !== undefined) return root.getByText(s.text, { exact: true });
  if (s.label !== undefined) return root.getByLabel(s.label, { exact: true });
  return root.locator(`xpath=${s.xpath!}`);
}

/** Whether a Playwright error's call log shows the action itself was performed or under way. */
export function actionStarted(err: unknown): boolean {
  return /\bperforming \w+ action\b|\b\w+ action done\b/.test(String((err as Error)?.message ?? ''));
}

/** Whether a Playwright error's call log shows the action was performed (only a wait after it failed). */
export function actionDone(err: unknown): boolean {
  return /\b\w+ action done\b/.test(String((err as Error)?.message ?? ''));
}

/** Playwright's refusals of a `fill` target that takes no typed text (it refuses at once, without waiting). */
export const REFUSED_FILL = /Element is not an <input>, <textarea>(?:, <select>)? or \[contenteditable\]|cannot be filled/i;

/** Map a Playwright error to a FlowError with a stable code; only its first line is kept (no call logs). */
export function browserError(err: unknown, what: string): Error {
  const msg = firstLine(err);
  if ((err as Error)?.name === 'TimeoutError') {
    return toolError('browser_timeout', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: true, cause: err });
  }
  if (/has been closed|Target closed|browser has disconnected/i.test(msg)) {
    return toolError('browser_closed', `[flowctl] [executor-playwright] ${what}: the page or browser closed (${msg})`, { retryable: true, cause: err });
  }
  if (/Not a checkbox or radio button|Cannot uncheck radio button|did not change its state/i.test(msg)) {
    return toolError('not_checkable', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
  }
  if (REFUSED_FILL.test(msg)) {
    return toolError('not_editable', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
  }
  if (/Element is not a <select> element/i.test(msg)) {
    return toolError('not_selectable', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
  }
  if (/Not an input\[type=file\] element|Not an <input> element/i.test(msg)) {
    return toolError('not_a_file_input', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
  }
  if (/Unknown key/i.test(msg)) {
    return toolError('invalid_tool_input', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
  }
  if (/net::ERR_|NS_ERROR_|Navigation failed/i.test(msg)) {
    return toolError('browser_navigation', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: true, cause: err });
  }
  return toolError('browser_error', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
}

export interface ActOptions<T> {
  /** `one`: exactly one element (actions, single extract); `some`: at least one (extract `all`). */
  need: 'one' | 'some';
  /** When the op must be done by (epoch ms): the step's budget from its start. */
  deadline: number;
  /** The appear window (APPEAR_WINDOW_MS unless the executor says otherwise). */
  appearMs: number;
  /**
   * Let the work already started on the page finish (settle.ts); called before every drift decision.
   * Resolves false when there was nothing to wait for (the page is as it was counted). `afterChange`:
   * the page just changed by itself (something appeared), so settle even when no action is pending.
   */
  settle(afterChange?: boolean): Promise<boolean>;
  /** The op, on a candidate locator, bounded by `timeoutMs`. */
  act(locator: PwLocator, timeoutMs: number): Promise<T>;
  /**
   * For reads: the op without waiting, returning how many elements it saw. It stands in for the
   * primary's count and the op at once (one round trip) when it saw as many as needed.
   */
  read?(locator: PwLocator): Promise<{ count: number; value: T }>;
  /** For messages: `click`, `drag source`, ... */
  what: string;
  /** Resolve the target in this iframe's content instead of the page (resolveFrame). */
  root?: LocatorRoot;
}

export interface ActResult<T> {
  value: T;
  /** The locator that matched, as text (e.g. `testid=login`). */
  matched: string;
}

/** Race a Playwright call with the step's abort signal; the call itself ends with its own timeout or the run's context. */
export function guard<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason ?? new Error('aborted'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Resolves on the first DOM change of the page or frame (any node, attribute or text), or false after `ms`. */
async function nextMutation(root: LocatorRoot, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  // The observer disconnects itself on the first change; a navigation drops it with its document.
  const firstChange = () =>
    new Promise<true>((resolve) => {
      const observer = new MutationObserver(() => {
        observer.disconnect();
        resolve(true);
      });
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    });
  // In a frame, its document: through its root element.
  const changed = ('mainFrame' in root ? root.evaluate(firstChange) : root.locator(':root').evaluate(firstChange)).catch(() => true as const);
  const out = await Promise.race([changed, bound]);
  clearTimeout(timer);
  return out;
}

/**
 * Wait (up to `ms`) for the page to change in a way that can change the counts: when nothing matched,
 * for any candidate to be attached (Playwright's waitFor on the candidates `or`-ed together); when
 * something matched but not as needed, for the next DOM mutation. False when the time ran out.
 */
async function pageChange(root: LocatorRoot, candidates: { loc: PwLocator }[], counts: number[], ms: number): Promise<boolean> {
  if (counts.some((n) => n > 0)) return nextMutation(root, ms);
  const any = candidates
    .slice(1)
    .reduce((acc, c) => acc.or(c.loc), candidates[0]!.loc)
    .first();
  return any.waitFor({ state: 'attached', timeout: ms }).then(
    () => true,
    () => false,
  );
}

/** The strict-mode error of a locator that matched several elements when the op began. */
function isStrictViolation(err: unknown): boolean {
  return /strict mode violation/.test(String((err as Error)?.message)) && !actionStarted(err);
}

/** Run an op on a target through its primary locator or a fallback (see the module comment). */
export async function actOnTarget<T>(page: Page, target: Locator, ctx: ToolContext, options: ActOptions<T>): Promise<ActResult<T>> {
  const root = options.root ?? page;
  const candidates = strategiesOf(target).map((s) => ({ text: describeStrategy(s), loc: toPlaywright(root, s) }));
  const primary = candidates[0]!;
  const matches = (n: number) => (options.need === 'one' ? n === 1 : n >= 1);
  const remaining = () => Math.max(1, options.deadline - Date.now());
  const probe = async (which = candidates) => {
    try {
      return await guard(Promise.all(which.map((c) => c.loc.count())), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw browserError(err, `${options.what} ${primary.text}`);
    }
  };
  /** The op on one candidate; undefined when it matched several by the time the op began (decide again). */
  const run = async (c: (typeof candidates)[number]): Promise<{ value: T } | undefined> => {
    try {
      return { value: await guard(options.act(c.loc, remaining()), ctx.signal) };
    } catch (err) {
      if (ctx.signal.aborted || isFlowError(err)) throw err;
      if (isStrictViolation(err)) return undefined;
      throw browserError(err, `${options.what} ${c.text}`);
    }
  };

  // 1. The primary as it is: one match is what a handwritten script would act on.
  if (options.read) {
    let seen: { count: number; value: T };
    try {
      seen = await guard(options.read(primary.loc), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw browserError(err, `${options.what} ${primary.text}`);
    }
    if (matches(seen.count)) return { value: seen.value, matched: primary.text };
  }
  const [primaryCount] = await probe([primary]);
  if (matches(primaryCount!)) {
    const done = await run(primary);
    if (done) return { value: done.value, matched: primary.text };
  }

  // 2. and 3. On the settled page, every candidate at once; then the appear window.
  let counts: number[] = [];
  await guard(options.settle(), ctx.signal);
  const appearBy = Date.now() + options.appearMs;
  let last = false;
  // Bounded: every turn waits for a change of the page, and the turn after the window ends is the last.
  for (let turn = 0; turn < 1000; turn++) {
    counts = await probe();
    const chosen = counts.findIndex(matches);
    if (chosen >= 0) {
      const c = candidates[chosen]!;
      const done = await run(c);
      if (!done) continue;
      if (chosen > 0) {
        ctx.warn({
          code: 'drift',
          message: `${options.what}: primary ${primary.text} matched ${counts[0]}; fallback ${c.text} matched`,
          data: { matched: c.text, tried: candidates.map((x, i) => ({ locator: x.text, count: counts[i]! })) },
        });
      }
      return { value: done.value, matched: c.text };
    }
    const left = appearBy - Date.now();
    if (last || left <= 0) break;
    if (await guard(pageChange(root, candidates, counts, left), ctx.signal)) await guard(options.settle(true), ctx.signal);
    else last = true;
  }
  const tried = candidates.map((c, i) => ({ locator: c.text, count: counts[i]! }));
  const need = options.need === 'one' ? 'exactly one element' : 'at least one element';
  const url = new URL(page.url());
  // An optional step whose target is nowhere (no candidate matched anything): skipped, not drift.
  // A target that matched several elements is still drift: something is there, just not one thing.
  if (ctx.optional && counts.every((n) => n === 0)) {
    throw toolError(
      'target_absent',
      `[flowctl] [executor-playwright] ${options.what}: the target did not appear within ${options.appearMs} ms on ${url.origin}${url.pathname} (tried ${tried
        .map((t) => t.locator)
        .join(', ')})`,
      { retryable: false, data: { tried, page: `${url.origin}${url.pathname}`, window_ms: options.appearMs } },
    );
  }
  throw toolError(
    'locator_drift',
    `[flowctl] [executor-playwright] ${options.what}: no locator matched ${need} on ${url.origin}${url.pathname} (tried ${tried
      .map((t) => `${t.locator}: ${t.count}`)
      .join(', ')})`,
    { retryable: false, data: { tried, need: options.need, page: `${url.origin}${url.pathname}` } },
  );
}

/**
 * The content of the iframe a target lives in: each level (outermost first) is a target naming an
 * `<iframe>` in the level above, located by the drift rules (a fallback warns, none fails
 * `locator_drift` naming the frame). A target that names something else fails `not_a_frame`.
 */
export async function resolveFrame(
  page: Page,
  frames: readonly Locator[],
  ctx: ToolContext,
  options: Omit<ActOptions<PwLocator>, 'act' | 'read' | 'need' | 'root'>,
): Promise<LocatorRoot> {
  let root: LocatorRoot = page;
  for (const [i, frame] of frames.entries()) {
    const level = frames.length > 1 ? ` ${i + 1} of ${frames.length}` : '';
    const r: ActResult<PwLocator> = await actOnTarget(page, frame, ctx, {
      ...options,
      root,
      need: 'one',
      what: `${options.what} frame${level}`,
      act: async (loc, t) => {
        const tag = await loc.evaluate((el) => el.tagName, undefined, { timeout: t });
        if (tag !== 'IFRAME' && tag !== 'FRAME') {
          throw toolError('not_a_frame', `[flowctl] [executor-playwright] ${options.what}: frame${level} names a <${tag.toLowerCase()}>, not an <iframe>`, {
            retryable: false,
            data: { level: i, tag: tag.toLowerCase() },
          });
        }
        return loc;
      },
    });
    root = r.value.contentFrame();
  }
  return root;
}
