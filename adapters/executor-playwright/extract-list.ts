import type { Page } from 'playwright-core';
import { toolError } from '../../src/tools/contract.js';
import type { ToolContext } from '../../src/tools/types.js';
import { describeStrategy, strategiesOf, type Locator } from '../../src/record/locator.js';
import { actOnTarget, browserError, guard, toPlaywright, type ActOptions } from './locate.js';

/**
 * `extract` with `all` and a `container` (extract 1.2.0; docs/browser.md, "Lists"). The page has
 * settled (extract is a read). The items are read through their primary locator; when it matches
 * nothing, the container decides: it is located by the drift rules (its fallbacks warn `drift`; none
 * within the appear window fails `locator_drift` naming the container, so a redesigned page is never
 * read as an empty list). With the container there, a fallback of the items that matches is used
 * (warning `drift`), and otherwise the list is empty: `[]`, at once, with no appear window for items.
 * Items are located on the page (or frame), as recorded, not inside the container.
 */
export async function readList<T>(
  page: Page,
  items: Locator,
  container: Locator,
  ctx: ToolContext,
  options: Omit<ActOptions<unknown>, 'act' | 'read' | 'need' | 'what'>,
  read: (loc: ReturnType<typeof toPlaywright>) => Promise<T[]>,
): Promise<{ matched: string; value: T[] }> {
  const root = options.root ?? page;
  const candidates = strategiesOf(items).map((s) => ({ text: describeStrategy(s), loc: toPlaywright(root, s) }));
  const primary = candidates[0]!;
  const attempt = async <R>(p: Promise<R>, what: string): Promise<R> => {
    try {
      return await guard(p, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw browserError(err, what);
    }
  };
  const first = await attempt(read(primary.loc), `extract ${primary.text}`);
  if (first.length > 0) return { matched: primary.text, value: first };
  // The items are not there: the container says whether that is an empty list or a changed page.
  // An optional step is not a thing for extract (a read), so the container always counts as drift.
  const { optional: _optional, ...strict } = ctx;
  await actOnTarget(page, container, strict, { ...options, need: 'one', what: 'extract container', act: async (loc) => loc });
  const counts = await attempt(Promise.all(candidates.map((c) => c.loc.count())), `extract ${primary.text}`);
  const chosen = counts.findIndex((n) => n > 0);
  if (chosen <= 0) return { matched: primary.text, value: [] };
  const c = candidates[chosen]!;
  const value = await attempt(read(c.loc), `extract ${c.text}`);
  ctx.warn({
    code: 'drift',
    message: `extract: primary ${primary.text} matched 0; fallback ${c.text} matched`,
    data: { matched: c.text, tried: candidates.map((x, i) => ({ locator: x.text, count: counts[i]! })) },
  });
  return { matched: c.text, value };
}

/** The input error of `container` without `all`. */
export function containerWithoutAll(): Error {
  return toolError('invalid_tool_input', '[flowctl] [executor-playwright] extract: container goes with all: true (the element that holds the list)', {
    retryable: false,
  });
}
