import { toolError } from '../../../src/tools/contract.js';
import type { Tool } from '../../../src/tools/types.js';
import { describeStrategy, strategiesOf } from '../../../src/record/locator.js';
import { BROWSER_CONTRACTS_NEW } from '../contracts.js';
import { browserError, guard, toPlaywright } from '../locate.js';
import { type BrowserToolsConfig, browserTool, COMPONENT, pageOrigin, parseTarget } from './step.js';

/** wait: for what settling cannot know, a target shown or hidden (with a text), event-driven. */
export function waitTool(cfg: BrowserToolsConfig): Tool {
  const wait = browserTool<
    { target: unknown; state?: 'visible' | 'hidden'; text?: string; timeout_ms?: number },
    { state: 'visible' | 'hidden'; matched?: string }
  >(
    BROWSER_CONTRACTS_NEW.wait,
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      const state = input.state ?? 'visible';
      const bound = Math.min(input.timeout_ms ?? Number.POSITIVE_INFINITY, step.remaining());
      const candidates = strategiesOf(target).map((st) => {
        // Only visible elements count, and with a text only those that contain it (case-sensitive).
        let loc = toPlaywright(step.root ?? s.page, st);
        if (input.text !== undefined) loc = loc.filter({ hasText: new RegExp(escapeRegExp(input.text)) });
        return { text: describeStrategy(st), loc: loc.filter({ visible: true }) };
      });
      const any = candidates
        .slice(1)
        .reduce((acc, c) => acc.or(c.loc), candidates[0]!.loc)
        .first();
      const what = `wait ${candidates[0]!.text}`;
      try {
        // Event-driven: Playwright re-checks on every DOM change, no polling interval of ours.
        await guard(any.waitFor({ state: state === 'visible' ? 'attached' : 'detached', timeout: bound }), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if ((err as Error)?.name !== 'TimeoutError') throw browserError(err, what);
        const ms = Math.round(bound);
        const cond =
          state === 'hidden'
            ? input.text === undefined
              ? 'to be hidden'
              : 'to stop showing its text'
            : input.text === undefined
              ? 'to be visible'
              : 'to show its text';
        throw toolError('wait_timeout', `[flowctl] [${COMPONENT}] ${what}: waited ${ms} ms for the target ${cond}`, {
          retryable: true,
          data: { state, text: input.text !== undefined, timeout_ms: ms, page: pageOrigin(s.page) },
        });
      }
      if (state === 'hidden') return { state };
      // Which locator showed it: the first in order, as for any target; a fallback is drift.
      const counts = await guard(Promise.all(candidates.map((c) => c.loc.count())), ctx.signal).catch(() => candidates.map(() => 0));
      const chosen = Math.max(
        0,
        counts.findIndex((n) => n > 0),
      );
      if (chosen > 0) {
        ctx.warn({
          code: 'drift',
          message: `wait: primary ${candidates[0]!.text} matched ${counts[0]}; fallback ${candidates[chosen]!.text} matched`,
          data: { matched: candidates[chosen]!.text, tried: candidates.map((c, i) => ({ locator: c.text, count: counts[i]! })) },
        });
      }
      return { state, matched: candidates[chosen]!.text };
    },
    'wait',
  );
  return wait;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
