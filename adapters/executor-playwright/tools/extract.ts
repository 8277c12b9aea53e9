import type { Locator as PwLocator } from 'playwright-core';
import { toolError } from '../../../src/tools/contract.js';
import type { Tool } from '../../../src/tools/types.js';
import { BROWSER_CONTRACTS, BROWSER_CONTRACTS_1_1, BROWSER_CONTRACTS_1_2 } from '../contracts.js';
import { containerWithoutAll, readList } from '../extract-list.js';
import { actOnTarget } from '../locate.js';
import { type BrowserToolsConfig, browserTools, COMPONENT, pageOrigin, parseTarget } from './step.js';

/** extract, every version: text (content or rendered) or an attribute of one element or all, or a list within its container. */
export function extractTools(cfg: BrowserToolsConfig): { extract: Tool; extract11: Tool; extract12: Tool } {
  const [extract, extract11, extract12] = browserTools<
    { target: unknown; attribute?: string; all?: boolean; text?: 'content' | 'rendered'; container?: unknown },
    { matched: string; value: unknown }
  >(
    [BROWSER_CONTRACTS.extract, BROWSER_CONTRACTS_1_1.extract, BROWSER_CONTRACTS_1_2.extract],
    cfg,
    async (input, s, ctx, step) => {
      const target = parseTarget(input.target, 'target');
      if (input.attribute !== undefined && input.text !== undefined) {
        throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] extract: text goes without attribute (it says how to read the text)`, {
          retryable: false,
        });
      }
      if (input.container !== undefined && input.all !== true) throw containerWithoutAll();
      const container = input.container === undefined ? undefined : parseTarget(input.container, 'container');
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      // A list with its container: empty is [] while the container is there (extract-list.ts).
      if (container) return readList(s.page, target, container, ctx, step, (loc) => readValues(loc, input.attribute, input.text === 'rendered'));
      const r = await actOnTarget(s.page, target, ctx, {
        ...step,
        need: input.all ? 'some' : 'one',
        what: 'extract',
        act: async (loc, t) => {
          // Single: waitFor is strict, so it also proves there is exactly one match.
          await (input.all ? loc.first() : loc).waitFor({ state: 'attached', timeout: t });
          const values = await readValues(loc, input.attribute, input.text === 'rendered');
          return input.all ? values : (values[0] ?? null);
        },
        // The settled page read as it is, in one round trip, when the primary matches as needed.
        read: async (loc) => {
          const values = await readValues(loc, input.attribute, input.text === 'rendered');
          return { count: values.length, value: input.all ? values : (values[0] ?? null) };
        },
      });
      return { matched: r.matched, value: r.value };
    },
    'read',
  );

  return { extract: extract!, extract11: extract11!, extract12: extract12! };
}

/**
 * Text (whitespace collapsed, trimmed; or as rendered: innerText) or an attribute of every element a
 * locator matches, in one round trip.
 */
function readValues(loc: PwLocator, attribute: string | undefined, rendered = false): Promise<(string | null)[]> {
  return loc.evaluateAll(
    (els, [attr, asRendered]) =>
      els.map((el) => {
        // innerText keeps the line breaks of <br>, blocks and preformatted text, and leaves hidden text out.
        if (attr === undefined && asRendered) return 'innerText' in el ? (el as HTMLElement).innerText : (el.textContent ?? '');
        if (attr === undefined) return (el.textContent ?? '').replace(/\s+/g, ' ').trim();
        // `value` reads the live value of form fields, not the attribute the page was served with.
        if (attr === 'value' && 'value' in el) return String((el as HTMLInputElement).value);
        return el.getAttribute(attr);
      }),
    [attribute, rendered] as const,
  );
}
