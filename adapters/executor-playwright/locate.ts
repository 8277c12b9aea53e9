import type { Locator as PwLocator, Page } from 'playwright-core';
import { toolError } from '../../src/tools/contract.js';
import type { ToolContext } from '../../src/tools/types.js';
import { describeStrategy, strategiesOf, type Locator, type LocatorStrategy } from '../../src/record/locator.js';
import { firstLine } from './browser-pool.js';

/**
 * Locator drift, deterministically (docs/browser.md, "Locator drift").
 *
 * The step's budget B (its timeout minus a small reserve for the diagnosis) is split in two:
 * 1. the op runs on the primary locator with Playwright's actionability waits for the primary share P
 *    (default B/2, or the executor's `primaryTimeoutMs`);
 * 2. if that fails because the primary matched nothing or several elements, the page has had P to
 *    settle: each locator is counted once, in order (primary, then fallbacks), and the op runs on the
 *    first that matches as needed, with the rest R = B - P. A fallback match succeeds with a `drift`
 *    warning; no match is FlowError `locator_drift` with every locator tried and its count.
 * If the primary matched exactly one element that was not yet actionable, the op retries on it with R.
 * No fixed sleeps: every wait is Playwright waiting for a condition, bounded by the budget.
 */

export interface Budget {
  primaryMs: number;
  restMs: number;
}

/** Split a step's timeout into the primary share and the rest (see above). */
export function splitBudget(timeoutMs: number, primaryTimeoutMs?: number): Budget {
  const reserve = Math.min(1000, Math.floor(timeoutMs * 0.1));
  const budget = Math.max(1, timeoutMs - reserve);
  const primaryMs = Math.max(1, Math.min(primaryTimeoutMs ?? Math.floor(budget / 2), budget));
  return { primaryMs, restMs: Math.max(1, budget - primaryMs) };
}

export function toPlaywright(page: Page, s: LocatorStrategy): PwLocator {
  if (s.css !== undefined) return page.locator(s.css);
  if (s.testid !== undefined) return page.getByTestId(s.testid);
  if (s.role !== undefined) {
    return page.getByRole(s.role as Parameters<Page['getByRole']>[0], s.name === undefined ? {} : { name: s.name, exact: true });
  }
  if (s.text !== undefined) return page.getByText(s.text, { exact: true });
  if (s.label !== undefined) return page.getByLabel(s.label, { exact: true });
  return page.locator(`xpath=${s.xpath!}`);
}

/** Playwright failed to find exactly one element (as opposed to the page or browser failing). */
export function isLocateFailure(err: unknown): boolean {
  const e = err as Error;
  // A timeout after Playwright began the action (its call log says "performing click action") is
  // not a locate failure: the page may already have reacted, and acting again through a fallback
  // could click twice or act on the next page.
  if (actionStarted(err)) return false;
  return e?.name === 'TimeoutError' || /strict mode violation/.test(String(e?.message));
}

/** Whether a Playwright error's call log shows the action itself was performed or under way. */
export function actionStarted(err: unknown): boolean {
  return /\bperforming \w+ action\b|\b\w+ action done\b/.test(String((err as Error)?.message ?? ''));
}

/** Whether a Playwright error's call log shows the action was performed (only a wait after it failed). */
export function actionDone(err: unknown): boolean {
  return /\b\w+ action done\b/.test(String((err as Error)?.message ?? ''));
}

/** Map a Playwright error to a FlowError with a stable code; only its first line is kept (no call logs). */
export function browserError(err: unknown, what: string): Error {
  const msg = firstLine(err);
  if ((err as Error)?.name === 'TimeoutError') {
    return toolError('browser_timeout', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: true, cause: err });
  }
  if (/has been closed|Target closed|browser has disconnected/i.test(msg)) {
    return toolError('browser_closed', `[flowctl] [executor-playwright] ${what}: the page or browser closed (${msg})`, { retryable: true, cause: err });
  }
  if (/net::ERR_|NS_ERROR_|Navigation failed/i.test(msg)) {
    return toolError('browser_navigation', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: true, cause: err });
  }
  return toolError('browser_error', `[flowctl] [executor-playwright] ${what}: ${msg}`, { retryable: false, cause: err });
}

export interface ActOptions<T> {
  /** `one`: exactly one element (actions, single extract); `some`: at least one (extract `all`). */
  need: 'one' | 'some';
  budget: Budget;
  /** The op, on a candidate locator, bounded by `timeoutMs`. */
  act(locator: PwLocator, timeoutMs: number): Promise<T>;
  /** For messages: `click`, `drag source`, ... */
  what: string;
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

/** Run an op on a target through its primary locator, then its fallbacks (see the module comment). */
export async function actOnTarget<T>(page: Page, target: Locator, ctx: ToolContext, options: ActOptions<T>): Promise<ActResult<T>> {
  const strategies = strategiesOf(target);
  const primary = strategies[0]!;
  const primaryText = describeStrategy(primary);
  const primaryLoc = toPlaywright(page, primary);
  const matches = (n: number) => (options.need === 'one' ? n === 1 : n >= 1);
  const run = async (loc: PwLocator, ms: number, text: string) => {
    try {
      return await guard(options.act(loc, ms), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw browserError(err, `${options.what} ${text}`);
    }
  };

  try {
    return { value: await guard(options.act(primaryLoc, options.budget.primaryMs), ctx.signal), matched: primaryText };
  } catch (err) {
    if (ctx.signal.aborted || !isLocateFailure(err)) throw ctx.signal.aborted ? err : browserError(err, `${options.what} ${primaryText}`);
  }

  const tried: { locator: string; count: number }[] = [];
  const primaryCount = await guard(primaryLoc.count(), ctx.signal);
  tried.push({ locator: primaryText, count: primaryCount });
  if (matches(primaryCount)) {
    // Present but not actionable within the primary share: give it the rest.
    return { value: await run(primaryLoc, options.budget.restMs, primaryText), matched: primaryText };
  }
  for (const fallback of strategies.slice(1)) {
    const text = describeStrategy(fallback);
    const loc = toPlaywright(page, fallback);
    const count = await guard(loc.count(), ctx.signal);
    tried.push({ locator: text, count });
    if (!matches(count)) continue;
    const value = await run(loc, options.budget.restMs, text);
    ctx.warn({
      code: 'drift',
      message: `${options.what}: primary locator ${primaryText} matched ${primaryCount} element${primaryCount === 1 ? '' : 's'}; fallback ${text} matched`,
      data: { matched: text, tried },
    });
    return { value, matched: text };
  }
  const need = options.need === 'one' ? 'exactly one element' : 'at least one element';
  const url = new URL(page.url());
  throw toolError(
    'locator_drift',
    `[flowctl] [executor-playwright] ${options.what}: no locator matched ${need} on ${url.origin}${url.pathname} (tried ${tried
      .map((t) => `${t.locator}: ${t.count}`)
      .join(', ')})`,
    { retryable: false, data: { tried, need: options.need, page: `${url.origin}${url.pathname}` } },
  );
}
