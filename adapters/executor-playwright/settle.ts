import type { BrowserContext, Frame, Page, Request } from 'playwright-core';

/**
 * Settling after an action. A click, fill or navigation often starts work whose result changes the
 * page a moment later: requests (a search, a form post, an SPA's data fetch) and short timers (a
 * debounced search box, a simulated delay, a "Saving..." that turns into "Saved"). Reading the page
 * right away would read it before the change. So after an action the page's document, fetch and XHR
 * requests are awaited until none is in flight, and its short one-shot timers until none is pending;
 * then one animation frame and one task let their DOM updates land. Nothing waits when the page has
 * neither: static pages pay nothing. No fixed sleep: only conditions, each bounded.
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

/** Timers longer than this are scheduled work (a carousel, a session warning), not a reaction. */
export const SHORT_TIMER_MS = 1500;
/** Waiting for timers stops after this long per action, whatever keeps scheduling them. */
export const TIMER_WAIT_MAX_MS = 3000;
/** A callback that fired this often is a loop (polling, a clock), not a reaction: not waited for. */
const PERIODIC_FIRES = 3;
const TIMER_BINDING = '__flowctlTimers';

/**
 * Runs in every document of a run's context before the page's own scripts: it counts pending
 * one-shot timers with a delay up to SHORT_TIMER_MS whose callback is not a loop, and reports each
 * change between none and some through a binding (two messages per busy spell, none on pages
 * without timers). A timer stays pending until its callback returned, so timers it schedules keep
 * the page busy. setInterval, string callbacks and requestAnimationFrame are not counted.
 */
const TIMER_SCRIPT = `(() => {
  const report = globalThis[${JSON.stringify(TIMER_BINDING)}];
  if (typeof report !== 'function' || globalThis.__flowctlTimersInstalled) return;
  Object.defineProperty(globalThis, '__flowctlTimersInstalled', { value: true });
  const nativeSet = globalThis.setTimeout;
  const nativeClear = globalThis.clearTimeout;
  const fires = new WeakMap();
  const pending = new Set();
  const tell = (busy) => { try { report(busy).catch(() => {}); } catch {} };
  const done = (id) => { if (pending.delete(id) && pending.size === 0) tell(false); };
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
    if (pending.size === 1) tell(true);
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    nativeClear.call(this, id);
    done(id);
  };
  // Pages that inspect these functions see the native ones' text.
  const nativeText = (fn) => () => Function.prototype.toString.call(fn);
  Object.defineProperty(globalThis.setTimeout, 'toString', { value: nativeText(nativeSet) });
  Object.defineProperty(globalThis.clearTimeout, 'toString', { value: nativeText(nativeClear) });
})();`;

export interface TimerTracker {
  /** Whether some frame of the page has a short one-shot timer pending. */
  readonly busy: boolean;
  /** Resolves when no frame has one. */
  idle(): Promise<void>;
}

/** Install the timer counter in every document the context loads from now on. */
export async function trackTimers(context: BrowserContext): Promise<TimerTracker> {
  const busyFrames = new Set<Frame>();
  let waiters: (() => void)[] = [];
  const update = (frame: Frame, busy: boolean) => {
    if (busy) busyFrames.add(frame);
    else if (busyFrames.delete(frame) && busyFrames.size === 0) {
      const ready = waiters;
      waiters = [];
      for (const w of ready) w();
    }
  };
  // A document that goes away takes its timers with it. Listen before anything can open a page.
  const watched = new WeakSet<Page>();
  const watch = (page: Page) => {
    if (watched.has(page)) return;
    watched.add(page);
    page.on('framenavigated', (frame) => update(frame, false));
    page.on('framedetached', (frame) => update(frame, false));
  };
  context.on('page', watch);
  for (const page of context.pages()) watch(page);
  await Promise.all([
    context.exposeBinding(TIMER_BINDING, (source, busy: unknown) => update(source.frame, busy === true)),
    context.addInitScript(TIMER_SCRIPT),
  ]);
  return {
    get busy() {
      return busyFrames.size > 0;
    },
    idle() {
      return busyFrames.size === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
    },
  };
}

/** What held an action's settling up when its bound ran out. */
export type SettleResult = { settled: true } | { settled: false; waitingFor: 'requests' | 'timers' };

/**
 * Wait for the requests an action started (those counted after `startedBefore`) to finish and for
 * the page's short timers to fire, in turns (a timer may start a request, a response may set a
 * timer), bounded by `boundMs` for requests and TIMER_WAIT_MAX_MS for timers. When a bound runs out
 * (long polling, streams, a timer loop) the step goes on and the caller says so in the log rather
 * than failing.
 */
export async function settleAfterAction(
  page: Page,
  net: NetworkTracker,
  timers: TimerTracker | undefined,
  startedBefore: number,
  boundMs: number,
): Promise<SettleResult> {
  // No extra round trip: Playwright's action handshake returns after the page handled the input
  // events, and the request and binding events those handlers caused reach us before it
  // (test/e2e/browser-settle).
  if (net.started === startedBefore && net.inflight === 0 && !timers?.busy) return { settled: true };
  const start = Date.now();
  const timerDeadline = start + Math.min(boundMs, TIMER_WAIT_MAX_MS);
  const deadline = start + boundMs;
  let result: SettleResult = { settled: true };
  // Bounded: every turn waits for something that must change, and both deadlines end the loop.
  for (let turn = 0; turn < 100; turn++) {
    if (net.inflight > 0) {
      if (!(await within(net.idle(), deadline - Date.now()))) {
        result = { settled: false, waitingFor: 'requests' };
        break;
      }
      continue;
    }
    if (timers?.busy) {
      if (Date.now() >= timerDeadline || !(await within(timers.idle(), timerDeadline - Date.now()))) {
        // Still nothing in flight: a timer loop is no reason to stop the flow.
        if (net.inflight === 0) {
          result = { settled: false, waitingFor: 'timers' };
          break;
        }
      }
      continue;
    }
    break;
  }
  // One animation frame and one task (a message, not a timer) for the DOM updates to land.
  await page
    .evaluate(
      () =>
        new Promise<void>((r) =>
          requestAnimationFrame(() => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => r();
            channel.port2.postMessage(0);
          }),
        ),
    )
    .catch(() => undefined);
  return result;
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
