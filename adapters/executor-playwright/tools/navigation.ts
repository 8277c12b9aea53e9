import type { Response } from 'playwright-core';
import { toolError } from '../../../src/tools/contract.js';
import type { Tool } from '../../../src/tools/types.js';
import { BROWSER_CONTRACTS, BROWSER_CONTRACTS_NEW } from '../contracts.js';
import { DENIED_HEADER } from '../egress-proxy.js';
import { browserError, guard } from '../locate.js';
import { type BrowserToolsConfig, browserTool, CLOSE_SETTLE_MS, COMPONENT, pageOrigin, settlePending } from './step.js';

/** Where the run's page is: navigate to a URL, switch to a page the run opened. */
export function navigationTools(cfg: BrowserToolsConfig): { navigate: Tool; switchPage: Tool } {
  const navigate = browserTool<{ url: string }, { url: string; status: number | null }>(BROWSER_CONTRACTS.navigate, cfg, async (input, s, ctx, step) => {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      url = new URL('invalid:');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw toolError('invalid_tool_input', `[flowctl] [${COMPONENT}] navigate: url must be an absolute http(s) URL`, { retryable: false });
    }
    // Under an egress guard, a literal address or a metadata name is refused before the browser is asked.
    ctx.egress?.precheck(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
    ctx.effect({ kind: 'browser', target: url.origin });
    const refusedBefore = new Set(s.egress?.proxy.refusals);
    let response: Response | null;
    try {
      response = await guard(s.page.goto(url.href, { waitUntil: 'load', timeout: step.remaining() }), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // A refused tunnel (https) fails the navigation with a network error: the guard's refusal is the reason.
      const refused = s.egress?.proxy.refusals.filter((r) => !refusedBefore.has(r)).at(-1);
      throw refused?.error ?? browserError(err, `navigate ${url.origin}${url.pathname}`);
    }
    // A refused plain request (the URL or a hop of its redirects) is the proxy's 403.
    if (s.egress && response?.headers()[DENIED_HEADER] === 'denied') {
      const refused = s.egress.proxy.refusalOf(response.url());
      if (refused) throw refused.error;
    }
    return { url: s.page.url(), status: response?.status() ?? null };
  });

  const switchPage = browserTool<{ page: number }, { page: number; url: string }>(
    BROWSER_CONTRACTS_NEW.switch,
    cfg,
    async (input, s, ctx, step) => {
      const target = s.pages[input.page];
      if (!target) {
        throw toolError(
          'page_not_found',
          `[flowctl] [${COMPONENT}] switch: page ${input.page} was never opened (the run has pages 0 to ${s.pages.length - 1})`,
          {
            retryable: false,
            data: { page: input.page, pages: s.pages.length },
          },
        );
      }
      if (target.page.isClosed()) {
        throw toolError('page_closed', `[flowctl] [${COMPONENT}] switch: page ${input.page} has closed`, { retryable: false, data: { page: input.page } });
      }
      // The work the last action left on the page being left is settled first (bounded): it is not followed later.
      if (!s.page.isClosed() && s.pending) await settlePending(s, ctx, Math.min(CLOSE_SETTLE_MS, step.remaining()));
      s.pending = undefined;
      await cfg.pool.setCurrentPage(s, input.page);
      ctx.effect({ kind: 'browser', target: pageOrigin(s.page) });
      return { page: input.page, url: s.page.url() };
    },
    'switch',
  );

  return { navigate, switchPage };
}
