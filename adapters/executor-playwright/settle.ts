import type { BrowserContext, Page, Request } from 'playwright-core';

/**
 * Settling after an action. A click, fill or navigation often starts work whose result changes the
 * page a moment later: requests (a search, a form post, an SPA's data fetch) and short timers (a
 * debounced search box, a simulated delay, a "Saving..." that turns into "Saved"). Reading the page
 * right away would read it before the change. So after an action the page's document, fetch and XHR
 * requests are awaited until none is in flight, and its short one-shot timers until none is pending;
 * then one animation frame and one task let their DOM updates land. A page with neither costs one
 * round trip that waits for nothing. No fixed sleep: only conditions, each bounded.
 */
const TRACKED = new Set(['document', 'fetch', 'xhr']);

export interface NetworkTracker {
  /** Tracked requests started so far on the page. */
  readonly started: number;
  readonly inflight: number;
  /** Resolves when no tracked request is in flight. */
  idle(): Promise<void>;
}

/**
 * Trackers for every page of a context, fed from the context's own request events from the moment the
 * context exists: a page the run follows later (a popup, a new tab) has its requests counted from its
 * first one, including those its scripts started before the run took the page (page-level listeners
 * attached then would miss them).
 */
export function trackContextNetwork(context: BrowserContext): (page: Page) => NetworkTracker {
  const trackers = new WeakMap<Page, ReturnType<typeof newTracker>>();
  const of = (page: Page) => {
    let t = trackers.get(page);
    if (!t) trackers.set(page, (t = newTracker()));
    return t;
  };
  const pageOf = (r: Request): Page | undefined => {
    try {
      return r.frame().page();
    } catch {
      return undefined; // a service worker's request: no page
    }
  };
  context.on('request', (r) => {
    const page = pageOf(r);
    if (page) of(page).add(r);
  });
  const done = (r: Request) => {
    const page = pageOf(r);
    if (page) trackers.get(page)?.done(r);
  };
  context.on('requestfinished', done);
  context.on('requestfailed', done);
  return (page) => of(page).view;
}

function newTracker() {
  const inflight = new Set<Request>();
  let started = 0;
  let waiters: (() => void)[] = [];
  const add = (r: Request) => {
    if (!TRACKED.has(r.resourceType())) return;
    inflight.add(r);
    started++;
  };
  const done = (r: Request) => {
    if (!inflight.delete(r) || inflight.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  const view: NetworkTracker = {
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
  return { add, done, view };
}

/** Timers longer than this are scheduled work (a carousel, a session warning), not a reaction. */
export const SHORT_TIMER_MS = 1500;
/** Waiting for timers stops after this long per action, whatever keeps scheduling them. */
export const TIMER_WAIT_MAX_MS = 3000;
/** A callback that fired this often is a loop (polling, a clock), not a reaction: not waited for. */
const PERIODIC_FIRES = 3;
const SETTLE_FN = '__flowctlSettle';

/**
 * Runs in every document of a run's context before the page's own scripts. It counts pending
 * one-shot timers with a delay up to SHORT_TIMER_MS whose callback is not a loop, and defines
 * `__flowctlSettle(maxMs)`: resolves at once with 'none' when none is pending; otherwise with
 * 'settled' when none is left or 'timeout' when maxMs ran out. A timer stays pending until its callback returned, so timers it sets are followed.
 * setInterval, string callbacks and requestAnimationFrame are not counted. setTimeout and
 * clearTimeout keep their native toString text.
 */
const TIMER_SCRIPT = `(() => {
  if (Object.prototype.hasOwnProperty.call(globalThis, ${JSON.stringify(SETTLE_FN)})) return;
  const nativeSet = globalThis.setTimeout;
  const nativeClear = globalThis.clearTimeout;
  const fires = new WeakMap();
  const pending = new Set();
  const waiters = new Set();
  const done = (id) => {
    if (!pending.delete(id) || pending.size > 0) return;
    const ready = [...waiters];
    waiters.clear();
    for (const w of ready) w();
  };
  globalThis.setTimeout = function setTimeout(callback, delay, ...args) {
    const ms = Number(delay) || 0;
    if (typeof callback !== 'function' || ms > ${SHORT_TIMER_MS} || (fires.get(callback) || 0) >= ${PERIODIC_FIRES}) {
      return nativeSet.call(this, callback, delay, ...args);
    }
    let id;
    id = nativeSet.call(this, function () {
      fires.set(callback, (fires.get(callback) || 0) + 1);
      try { return callback.apply(this, args); } finally { done(id); }
    }, delay);
    pending.add(id);
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    nativeClear.call(this, id);
    done(id);
  };
  const nativeText = (fn) => () => Function.prototype.toString.call(fn);
  Object.defineProperty(globalThis.setTimeout, 'toString', { value: nativeText(nativeSet) });
  Object.defineProperty(globalThis.clearTimeout, 'toString', { value: nativeText(nativeClear) });
  Object.defineProperty(globalThis, ${JSON.stringify(SETTLE_FN)}, {
    value: (maxMs) => new Promise((resolve) => {
      if (pending.size === 0) return resolve('none');
      const waiter = () => { nativeClear(bound); resolve('settled'); };
      const bound = nativeSet(() => { waiters.delete(waiter); resolve('timeout'); }, maxMs);
      waiters.add(waiter);
    }),
  });
})();`;

/** Install the timer counter in every document the context loads from now on. */
export async function installTimerCounter(context: BrowserContext): Promise<void> {
  await context.addInitScript(TIMER_SCRIPT);
}

/**
 * Runs in one frame: awaits a document still loading to its load event, then its short timers
 * (TIMER_SCRIPT), then one animation frame and one task when anything happened or `land` says so.
 */
async function settleFrame({ fn, ms, land }: { fn: string; ms: number; land: boolean }): Promise<string> {
  const settle = (globalThis as Record<string, unknown>)[fn] as ((ms: number) => Promise<string>) | undefined;
  // A document without the counter (about:blank, a strict CSP) still lets responses render.
  // A document the action is still loading (a navigation it started) is awaited to its load event.
  const loading = document.readyState !== 'complete';
  if (loading) {
    await new Promise<void>((r) => {
      const bound = setTimeout(r, ms);
      addEventListener('load', () => (clearTimeout(bound), r()), { once: true });
    });
  }
  const counted = typeof settle === 'function' ? await settle(ms) : 'none';
  const outcome = loading && counted === 'none' ? 'settled' : counted;
  // One animation frame and one task (a message, not a timer) for the DOM updates to land.
  if (outcome !== 'none' || land) {
    await new Promise<void>((r) =>
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => r();
        channel.port2.postMessage(0);
      }),
    );
  }
  return outcome;
}

/** What held an action's settling up when its bound ran out. */
export type SettleResult = { settled: true; quiet: boolean } | { settled: false; waitingFor: 'requests' | 'timers' };

/**
 * Wait for the requests an action started (those counted after `startedBefore`) to finish and for
 * the page's short timers to fire, in turns (a timer may start a request, a response may set a
 * timer), bounded by `boundMs` for requests and TIMER_WAIT_MAX_MS for timers. When a bound runs out
 * (long polling, streams, a timer loop) the step goes on and the caller says so in the log rather
 * than failing. Costs one round trip to the page when it has neither requests nor timers.
 */
export async function settleAfterAction(page: Page, net: NetworkTracker, startedBefore: number, boundMs: number): Promise<SettleResult> {
  // Request events an action's handlers caused reach us before Playwright's action returns
  // (test/e2e/browser-settle); timers are asked about in the page itself.
  const start = Date.now();
  const timerDeadline = start + Math.min(boundMs, TIMER_WAIT_MAX_MS);
  const deadline = start + boundMs;
  let waitedForRequests = false;
  let waitedAtAll = false;
  // Bounded: every turn waits for something that must change, and both deadlines end the loop.
  for (let turn = 0; turn < 100; turn++) {
    if (net.inflight > 0) {
      waitedForRequests = true;
      waitedAtAll = true;
      if (!(await within(net.idle(), deadline - Date.now()))) return { settled: false, waitingFor: 'requests' };
    }
    const seen = net.started;
    const args = { fn: SETTLE_FN, ms: Math.max(1, timerDeadline - Date.now()), land: waitedForRequests || net.started !== startedBefore };
    // Every frame of the page (iframes have timers and loads of their own), in parallel.
    const outcomes = await Promise.all(
      page.frames().map((frame) =>
        frame
          .evaluate(settleFrame, args)
          // The action navigated and the old document is gone: the new one's request settles above.
          .catch(() => 'none'),
      ),
    );
    const outcome = outcomes.includes('timeout') ? 'timeout' : outcomes.includes('settled') ? 'settled' : 'none';
    waitedForRequests = false;
    if (net.inflight > 0 || net.started !== seen) continue;
    if (outcome === 'timeout') return { settled: false, waitingFor: 'timers' };
    return { settled: true, quiet: !waitedAtAll && outcome === 'none' && turn === 0 && net.started === startedBefore };
  }
  return { settled: true, quiet: false };
}

/** Whether `promise` settled within `ms` (false when the time ran out first). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bounded = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  const ok = await Promise.race([promise.then(() => true as const), bounded]);
  clearTimeout(timer);
  return ok;
}
