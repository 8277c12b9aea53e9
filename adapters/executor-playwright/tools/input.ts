import type { Locator as PwLocator } from 'playwright-core';
import { toolError } from '../../../src/tools/contract.js';
import type { StepWarning, Tool, ToolContext, ToolContract } from '../../../src/tools/types.js';
import { keyProblem } from '../../../src/record/keys.js';
import type { RunSession } from '../browser-pool.js';
import { BROWSER_CONTRACTS, BROWSER_CONTRACTS_1_1, BROWSER_CONTRACTS_NEW } from '../contracts.js';
import { actionDone, actOnTarget, browserError, guard, REFUSED_FILL } from '../locate.js';
import { checkEditable, checkSelect } from '../page-checks.js';
import { paintOver } from './masking.js';
import { type BrowserToolsConfig, browserTool, browserTools, COMPONENT, pageOrigin, parseTarget, type Step } from './step.js';
import { type FileArg, loadUpload, readsFilesFromSource } from './uploads.js';

/** The tools that act on the page's elements: click, hover, check, uncheck, press, fill, select, drag, upload. */
export function inputTools(
  cfg: BrowserToolsConfig,
): Record<
  'click' | 'click11' | 'hover' | 'check' | 'uncheck' | 'press' | 'fill' | 'fill11' | 'select' | 'select11' | 'drag' | 'drag11' | 'upload' | 'upload11',
  Tool
> {
  type ClickInput = { target: unknown; count?: number; button?: 'left' | 'right' | 'middle' };
  const clickBody = async (input: ClickInput, s: RunSession, ctx: ToolContext, step: Step) => {
    const target = parseTarget(input.target, 'target');
    ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
    const options = { clickCount: input.count ?? 1, button: input.button ?? 'left' } as const;
    const what = options.clickCount === 2 ? 'double-click' : options.button === 'left' ? 'click' : `${options.button} click`;
    const r = await actOnTarget(s.page, target, ctx, { ...step, need: 'one', what, act: (loc, t) => clickOnce(loc, t, options) });
    return { matched: r.matched };
  };
  const click = browserTool<ClickInput, { matched: string }>(BROWSER_CONTRACTS.click, cfg, clickBody);
  const click11 = browserTool<ClickInput, { matched: string }>(BROWSER_CONTRACTS_1_1.click, cfg, clickBody);

  /** hover, check and uncheck: one element, one Playwright call. */
  const simple = (contract: ToolContract, what: string, act: (loc: PwLocator, timeout: number) => Promise<void>) =>
    browserTool<{ target: unknown }, { matched: string }>(contract, cfg, async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const r = await actOnTarget(s.page, target, ctx, { ...step, need: 'one', what, act });
      return { matched: r.matched };
    });
  const hover = simple(BROWSER_CONTRACTS_NEW.hover, 'hover', (loc, t) => loc.hover({ timeout: t }));
  // setChecked is idempotent: a box already in the wanted state is left alone, without an error.
  const check = simple(BROWSER_CONTRACTS_NEW.check, 'check', (loc, t) => loc.setChecked(true, { timeout: t }));
  const uncheck = simple(BROWSER_CONTRACTS_NEW.uncheck, 'uncheck', (loc, t) => loc.setChecked(false, { timeout: t }));

  const press = browserTool<{ key: string; target?: unknown }, { matched: string | null }>(BROWSER_CONTRACTS_NEW.press, cfg, async (input, s, ctx, step) => {
    const problem = keyProblem(input.key);
    if (problem) throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] press: key ${problem}`, { retryable: false });
    const target = input.target === undefined ? undefined : parseTarget(input.target, 'target');
    ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
    if (!target) {
      if (step.root) throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] press: frame needs a target`, { retryable: false });
      // The focused element, wherever it is (a field a previous step filled, a frame's element).
      try {
        await guard(s.page.keyboard.press(input.key), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw browserError(err, `press ${input.key}`);
      }
      return { matched: null };
    }
    const r = await actOnTarget(s.page, target, ctx, {
      ...step,
      need: 'one',
      what: `press ${input.key}`,
      act: async (loc, t) => {
        try {
          await loc.press(input.key, { timeout: t });
        } catch (err) {
          // Like a click, a key (Enter on a form) may start a navigation Playwright waits for, or close its page: the key was pressed.
          if (!actionDone(err) && !loc.page().isClosed()) throw err;
        }
      },
    });
    return { matched: r.matched };
  });

  const [fill, fill11] = browserTools<{ target: unknown; value: string; mask?: boolean }, { matched: string }>(
    [BROWSER_CONTRACTS.fill, BROWSER_CONTRACTS_1_1.fill],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // A value that came from a secret is blacked out even when the flow did not say mask.
      const secret = input.mask === true || ctx.isSecret?.(input.value) === true;
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'fill',
        act: async (loc, t) => {
          if (secret) {
            // The mask is painted before anything is typed, on a target known to take the text.
            await checkEditable(loc, t);
            await paintOver(loc, t);
          }
          try {
            await loc.fill(input.value, { timeout: t });
          } catch (err) {
            // Playwright refuses a target that takes no typed text at once; the check then says
            // what the target is (not_editable). Asked only then: it is a round trip to the page.
            if (REFUSED_FILL.test(String((err as Error)?.message))) await checkEditable(loc, t);
            throw err;
          }
          return loc;
        },
      });
      if (secret) s.masks.push(r.value);
      return { matched: r.matched };
    },
  );

  const [select, select11] = browserTools<{ target: unknown; value: string | string[]; mask?: boolean }, { matched: string; selected?: string[] }>(
    [BROWSER_CONTRACTS.select, BROWSER_CONTRACTS_1_1.select],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const secret = input.mask === true || [input.value].flat().some((v) => ctx.isSecret?.(v) === true);
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'select',
        act: async (loc, t) => {
          await checkSelect(loc, [input.value].flat(), t, secret, () => step.settle());
          if (secret) await paintOver(loc, t);
          return { loc, selected: await loc.selectOption(input.value, { timeout: t }) };
        },
      });
      if (secret) {
        s.masks.push(r.value.loc);
        return { matched: r.matched };
      }
      return { matched: r.matched, selected: r.value.selected };
    },
  );

  const [drag, drag11] = browserTools<{ source: unknown; target: unknown }, { source: string; target: string }>(
    [BROWSER_CONTRACTS.drag, BROWSER_CONTRACTS_1_1.drag],
    cfg,
    async (input, s, ctx, step) => {
      const source = parseTarget(input.source, 'source');
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // Both ends are located at once (each by the drift rules); their warnings are journaled source first.
      const visible = async (loc: PwLocator, t: number) => {
        await loc.waitFor({ state: 'visible', timeout: t });
        return loc;
      };
      const warnings: StepWarning[][] = [[], []];
      const ends = [source, target].map((t, i) =>
        actOnTarget(
          s.page,
          t,
          { ...ctx, warn: (w) => warnings[i]!.push(w) },
          { ...step, need: 'one', what: i === 0 ? 'drag source' : 'drag target', act: visible },
        ),
      );
      // Settle both before reporting, so the error (the source's first) and the warnings never depend on timing.
      const settled = await Promise.allSettled(ends);
      for (const w of warnings.flat()) ctx.warn(w);
      for (const r of settled) if (r.status === 'rejected') throw r.reason;
      const [from, to] = settled.map((r) => (r as PromiseFulfilledResult<Awaited<(typeof ends)[number]>>).value);
      try {
        await guard(from!.value.dragTo(to!.value, { timeout: step.remaining() }), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw browserError(err, `drag ${from!.matched} to ${to!.matched}`);
      }
      return { source: from!.matched, target: to!.matched };
    },
  );

  const [upload, upload11] = browserTools<{ target: unknown; files: FileArg[] }, { matched: string; files: { name: string; digest: string; size: number }[] }>(
    [BROWSER_CONTRACTS.upload, BROWSER_CONTRACTS_1_1.upload],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      const files = [];
      for (const f of input.files) files.push(await loadUpload(f, ctx));
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const payload = files.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer }));
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: 'one',
        what: 'upload',
        act: (loc, t) => loc.setInputFiles(payload, { timeout: t }),
      });
      return { matched: r.matched, files: files.map((f) => ({ name: f.name, digest: f.digest, size: f.buffer.length })) };
    },
  ).map(readsFilesFromSource);

  return {
    click,
    click11,
    hover,
    check,
    uncheck,
    press,
    fill: fill!,
    fill11: fill11!,
    select: select!,
    select11: select11!,
    drag: drag!,
    drag11: drag11!,
    upload: upload!,
    upload11: upload11!,
  };
}

/**
 * Click, bounded by `timeoutMs`. Playwright's click also waits for a navigation the click started;
 * when only that wait runs out (its call log says "click action done"), the click happened and
 * counts as done: the navigation is then awaited by settleAfterAction, and the click is never
 * repeated through a fallback on the next page.
 */
async function clickOnce(loc: PwLocator, timeoutMs: number, options: { clickCount: number; button: 'left' | 'right' | 'middle' }): Promise<void> {
  try {
    await loc.click({ timeout: timeoutMs, ...options });
  } catch (err) {
    // The click closed its own page (a popup's "Done" button): it was performed.
    if (loc.page().isClosed()) return;
    if (!actionDone(err)) throw err;
  }
}
