import type { Page, Request } from 'playwright-core';

/**
 * Network settling after an action. A click, fill or navigation often starts requests (a search,
 * a form post, an SPA's data fetch) whose responses change the page a moment later; reading the page
 * right away would read it before the change. So after an action the page's document, fetch and XHR
 * requests are awaited until none is in flight, then one animation frame and one task let their DOM
 * updates land. Nothing waits when the action started no request: static pages pay nothing.
 * No fixed sleep: only conditions, each bounded by the step's remaining budget.
 */
const TRACKED = new Set(['document', 'fetch', 'xhr']);

export interface NetworkTracker {
  /** Tracked requests started so far on the page. */
  readonly started: number;
  readonly inflight: number;
  /** Resolves when no tracked request is in flight. */
  idle(): Promise<void>;
}

export function trackNetwork(page: Page): NetworkTracker {
  const inflight = new Set<Request>();
  let started = 0;
  let waiters: (() => void)[] = [];
  page.on('request', (r) => {
    if (!TRACKED.has(r.resourceType())) return;
    inflight.add(r);
    started++;
  });
  const done = (r: Request) => {
    if (!inflight.delete(r) || inflight.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return {
    get started() {
      return started;
    },
    get inflight() {
      return inflight.size;
    },
    idle() {
      return inflight.size === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
    },
  };
}

/**
 * Wait for the requests an action started (those counted after `startedBefore`) to finish, bounded
 * by `boundMs`; returns false when the bound ran out with requests still in flight (long polling,
 * streams): the step goes on and says so in the log rather than failing.
 */
export async function settleAfterAction(page: Page, net: NetworkTracker, startedBefore: number, boundMs: number): Promise<boolean> {
  // No extra round trip: Playwright's action handshake returns after the page handled the input
  // events, and the request events those handlers caused reach us before it (test/e2e/browser-settle).
  if (net.started === startedBefore && net.inflight === 0) return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bounded = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), Math.max(1, boundMs));
  });
  const quiet = await Promise.race([net.idle().then(() => true as const), bounded]);
  clearTimeout(timer);
  if (!quiet) return false;
  await page
    .evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0))))
    .catch(() => undefined);
  return true;
}
