import type { Browser, BrowserContext, Locator as PwLocator, Page } from 'playwright-core';
import { FlowError } from '../../src/errors.js';
import { peerErrorFrom } from '../../src/util/peer-check.js';
import type { EgressGuard } from '../../src/tools/egress.js';
import { DENIED_HEADER, startEgressProxy, tunnelKey, type EgressProxy, type EgressRefusal } from './egress-proxy.js';
import { firstLine, launchChromium } from './launch.js';
import type { ResolveBrowserOptions } from './resolve-browser.js';
import { installTimerCounter, trackContextNetwork, type NetworkTracker } from './settle.js';
import { WarmContexts, type PreparedContext } from './warm-contexts.js';

/**
 * One warm browser per executor (launched lazily on the first browser step, or connected over CDP), and
 * one fresh, isolated BrowserContext per run: no cookies, storage or cache cross between runs.
 */

/** A page the run follows, with its requests (for settling). */
export interface RunPage {
  page: Page;
  net: NetworkTracker;
}

/** The browser state of one run. */
export interface RunSession {
  runId: string;
  context: BrowserContext;
  /** The page the run acts on now: the first, or one an `opens_page` step opened, or one `switch` chose. */
  page: Page;
  /** Fields filled with masked (secret) values: blacked out in every later screenshot of the run. */
  masks: PwLocator[];
  /** The current page's document/fetch/XHR requests, for settling after actions (settle.ts). */
  net: NetworkTracker;
  /** The request tracker of any page of the run's context, counting from the context's first request. */
  trackers: (page: Page) => NetworkTracker;
  /** Every page the run followed, in opening order (0 = the first); `switch` chooses by this index. */
  pages: RunPage[];
  /** An action whose work has not been settled yet (settled before a read, a drift decision, a screenshot or the close). */
  pending?: { action: string; startedBefore: number };
  /**
   * Under an egress guard: the run's guarded proxy, and the refusal of the last main-frame navigation
   * it refused (a step that sees it fails `egress_denied`).
   */
  egress?: SessionEgress;
}

/** A session's side of the egress guard. */
export interface SessionEgress {
  proxy: EgressProxy;
  /** The refusal of the last main-frame navigation the proxy refused (a step that sees it fails). */
  deniedNavigation?: EgressRefusal;
  /**
   * `host:port` of every request the context's pages (their frames and workers) made, as Playwright
   * reports them. A refusal of a destination the page never asked for is the browser's own traffic:
   * never reported as the page's (docs/tools.md, "Policy").
   */
  pageTargets: Set<string>;
}

const MAX_PAGE_TARGETS = 10_000;

/** The session side of the egress guard for a context: notes the destinations its pages request. */
export function sessionEgress(proxy: EgressProxy, context: BrowserContext): SessionEgress {
  const pageTargets = new Set<string>();
  context.on('request', (request) => notePageTarget(pageTargets, request.url()));
  return { proxy, pageTargets };
}

function notePageTarget(targets: Set<string>, text: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return;
  }
  if (!/^(https?|wss?):$/.test(url.protocol)) return;
  const key = tunnelKey(url);
  targets.delete(key);
  targets.add(key);
  if (targets.size > MAX_PAGE_TARGETS) targets.delete(targets.values().next().value!);
}

/** Whether a refusal is of a destination the run's pages requested (else: the browser's own traffic). */
export function refusedForPage(egress: SessionEgress, refusal: EgressRefusal): boolean {
  let key = refusal.target;
  if (/^[a-z]+:\/\//.test(key)) {
    try {
      key = tunnelKey(new URL(key));
    } catch {
      return false;
    }
  }
  return egress.pageTargets.has(key);
}

export interface BrowserPoolOptions extends Pick<ResolveBrowserOptions, 'executablePath' | 'env'> {
  cdpEndpoint?: string;
  headless?: boolean;
  launchArgs?: readonly string[];
  /** Contexts kept ready for the next runs (warm-contexts.ts). Default 0: each run makes its own. */
  warmContexts?: number;
  /** A browser launched for this pool before it existed (launchChromium): used first, closed on dispose. */
  launched?: Promise<Browser>;
}

export interface PoolStats {
  /** Browsers launched by this executor. */
  launches: number;
  /** CDP connections made by this executor. */
  connections: number;
  /** Run contexts open now. */
  openContexts: number;
  /** Contexts opened so far (for runs, and made ready in the warm pool). */
  contextsCreated: number;
  /** Contexts closed so far: after dispose, as many as were created. */
  contextsClosed: number;
  /** Contexts waiting ready in the warm pool now. */
  warmContexts: number;
}

export class BrowserPool {
  private browser: Promise<Browser> | undefined;
  private readonly sessions = new Map<string, Set<RunSession>>();
  private readonly stats_ = { launches: 0, connections: 0, contextsCreated: 0, contextsClosed: 0 };
  private disposed = false;
  /** Whether `options.launched` was taken (a browser that went away is then launched anew). */
  private adopted = false;
  private readonly warm: WarmContexts;
  /** Contexts of ended runs still closing (closeSession does not wait for them; dispose does). */
  private readonly closing = new Set<Promise<void>>();
  /** Called after a run's session opens and before it closes (the screencast hooks in here). */
  onOpen: (session: RunSession) => Promise<void> | void = () => {};
  onClose: (session: RunSession) => Promise<void> | void = () => {};
  /** Called after a run's current page changed (a new page followed, or `switch`). */
  onPageChange: (session: RunSession, previous: Page) => Promise<void> | void = () => {};

  constructor(private readonly options: BrowserPoolOptions) {
    this.warm = new WarmContexts(
      options.warmContexts ?? 0,
      (guarded) => this.prepare(guarded),
      (prepared) => this.discard(prepared),
    );
  }

  stats(): PoolStats {
    let open = 0;
    for (const set of this.sessions.values()) open += set.size;
    return { ...this.stats_, openContexts: open, warmContexts: this.warm.waiting };
  }

  /**
   * Start the browser and fill the warm pool (when it has a size) with contexts for runs under an
   * egress guard (`guarded`) or without: the first run then finds everything up.
   */
  prewarm(guarded: boolean): void {
    if (this.disposed) return;
    this.warm.warm(guarded);
    this.getBrowser().catch(() => {});
  }

  /** Open sessions of a run (normally one). */
  sessionsOf(runId: string): RunSession[] {
    return [...(this.sessions.get(runId) ?? [])];
  }

  /** The warm browser, launched or connected on first use; relaunched if it went away. */
  getBrowser(): Promise<Browser> {
    if (this.disposed) return Promise.reject(new FlowError('executor_disposed', '[flowctl] [executor-playwright] the executor was disposed'));
    this.browser ??= this.start().catch((err) => {
      this.browser = undefined;
      throw err;
    });
    return this.browser;
  }

  private async start(): Promise<Browser> {
    let browser: Browser;
    const launched = this.options.launched;
    if (launched && !this.adopted) {
      // A browser launched for this executor before it existed (flowctl run's early start): the first
      // browser is that one; it is counted and owned as one this executor launched.
      this.adopted = true;
      browser = await launched;
      this.stats_.launches++;
    } else if (this.options.cdpEndpoint) {
      // An optional peer: used without it, the executor says which package to install (docs/library.md).
      const { chromium } = await import('playwright-core').catch((err: unknown) => {
        throw peerErrorFrom(err, 'flowctl/adapters/executor-playwright', ['playwright-core']);
      });
      try {
        browser = await chromium.connectOverCDP(this.options.cdpEndpoint);
      } catch (err) {
        throw new FlowError(
          'browser_connect_failed',
          `[flowctl] [executor-playwright] cannot connect to the browser at ${this.options.cdpEndpoint}: ${firstLine(err)}`,
          {
            data: { retryable: true },
            cause: err,
          },
        );
      }
      this.stats_.connections++;
    } else {
      browser = await launchChromium(this.options);
      this.stats_.launches++;
    }
    browser.on('disconnected', () => {
      this.browser = undefined;
      this.warm.forget();
    });
    return browser;
  }

  /**
   * A fresh context and page for a run, from the warm pool when one waits there (never used by any run
   * before), else made now. Close it with closeSession (the run scope does). With an egress guard,
   * every request of the context goes through a guarded proxy of its own (loopback included:
   * `<-loopback>`), bound to this run's guard here and closed with the session.
   */
  async openSession(runId: string, egress?: EgressGuard): Promise<RunSession> {
    const { context, page, proxy } = this.warm.take(egress !== undefined) ?? (await this.prepare(egress !== undefined));
    if (proxy && egress) proxy.bind(egress);
    const session = newRunSession(runId, context, page, proxy);
    let set = this.sessions.get(runId);
    if (!set) this.sessions.set(runId, (set = new Set()));
    set.add(session);
    try {
      await this.onOpen(session);
    } catch {
      // A failing live view must never fail the run.
    }
    return session;
  }

  /**
   * Follow a page the run's context opened (a new tab or popup): track its requests (and, under an
   * egress guard, its refused navigations). Returns its index in opening order; it is not current yet.
   */
  followPage(session: RunSession, page: Page): number {
    const known = session.pages.findIndex((p) => p.page === page);
    if (known >= 0) return known;
    session.pages.push({ page, net: session.trackers(page) });
    if (session.egress) watchRefusedNavigations(session, session.egress.proxy, page);
    return session.pages.length - 1;
  }

  /** Make a followed page the current one (bring it to the front); the screencast follows it. */
  async setCurrentPage(session: RunSession, index: number): Promise<void> {
    const next = session.pages[index]!;
    const previous = session.page;
    session.page = next.page;
    session.net = next.net;
    if (previous === next.page) return;
    await next.page.bringToFront().catch(() => {});
    try {
      await this.onPageChange(session, previous);
    } catch {
      // A failing live view must never fail the run.
    }
  }

  async closeSession(session: RunSession): Promise<void> {
    const set = this.sessions.get(session.runId);
    if (!set?.delete(session)) return;
    if (set.size === 0) this.sessions.delete(session.runId);
    try {
      await this.onClose(session);
    } catch {
      // as above
    }
    // The run does not wait for its context to close (some 30 ms of Chromium's work at every run's
    // end): nothing of it is used again, its pages are gone with it, and dispose awaits the close.
    const closing = this.discard({ context: session.context, ...(session.egress ? { proxy: session.egress.proxy } : {}) });
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
    // The run is done with the browser: make the next runs' contexts now, between runs.
    if (!this.disposed) this.warm.refill();
  }

  /**
   * A fresh context and its blank page (with the timer counter in place before its first navigation);
   * `guarded`: with a proxy of its own (loopback included: `<-loopback>`), bound to the run's guard later.
   */
  private async prepare(guarded: boolean, again = false): Promise<PreparedContext> {
    const browser = await this.getBrowser();
    const proxy = guarded ? await startEgressProxy() : undefined;
    let context: BrowserContext;
    try {
      context = await browser.newContext({
        acceptDownloads: false,
        serviceWorkers: 'block',
        ...(proxy ? { proxy: { server: proxy.server, bypass: '<-loopback>' } } : {}),
      });
    } catch (err) {
      await proxy?.close();
      // The browser went away and its 'disconnected' event has not arrived yet (a busy event loop): drop
      // it and connect or launch again, once, so the step fails as a lost browser does
      // (browser_connect_failed, retryable) or goes on with the new one, never with Playwright's raw error.
      if (!again && (!browser.isConnected() || /has been closed|browser has disconnected/i.test(String(err)))) {
        if (this.browser !== undefined && (await this.browser.catch(() => undefined)) === browser) this.browser = undefined;
        return this.prepare(guarded, true);
      }
      throw err;
    }
    this.stats_.contextsCreated++;
    try {
      const [, page] = await Promise.all([installTimerCounter(context), context.newPage()]);
      return { context, page, ...(proxy ? { proxy } : {}) };
    } catch (err) {
      await this.discard({ context, ...(proxy ? { proxy } : {}) });
      throw err;
    }
  }

  /** Close a context (and its proxy); counted as closed from the start: no run uses it any more. */
  private async discard(prepared: Pick<PreparedContext, 'context' | 'proxy'>): Promise<void> {
    this.stats_.contextsClosed++;
    await prepared.context.close().catch(() => {});
    await prepared.proxy?.close().catch(() => {});
  }

  /**
   * Close every run context and the browser (or the CDP connection). `exiting`: the process exits
   * right after (process.exit), and a browser this pool launched is left to playwright-core's exit
   * handler, which kills it and removes its profile folder: the process ends some 80 ms sooner than
   * after a graceful close (docs/browser.md, "Ending the browser"). Over a CDP connection it changes nothing.
   */
  async dispose(options: { exiting?: boolean } = {}): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    // Left for the exit, the browser's contexts (warm or still closing) go with it.
    const leave = options.exiting === true && !this.options.cdpEndpoint;
    if (!leave) await this.warm.drain();
    for (const set of [...this.sessions.values()]) for (const s of [...set]) await this.closeSession(s);
    if (leave) return;
    // Contexts still closing: a browser this pool launched closes with them (a CLI run's end does not
    // wait for its context first); over a CDP connection they are closed before disconnecting.
    if (this.options.cdpEndpoint) await Promise.all(this.closing);
    const browser = await this.browser?.catch(() => undefined);
    this.browser = undefined;
    await browser?.close().catch(() => {});
    await Promise.all(this.closing);
    // A browser launched for this pool that no step came to use.
    if (this.options.launched && !this.adopted) {
      this.adopted = true;
      await (await this.options.launched.catch(() => undefined))?.close().catch(() => {});
    }
  }
}

/**
 * Note a main-frame navigation the proxy refused, however it started (navigate, a click, a script, a
 * redirect): as the proxy's 403 answer to a plain request, or as the failed request of a refused tunnel.
 */
/**
 * A run session on `page` of `context` (a run's, or the studio's for its replays): its request
 * trackers, and with a proxy its side of the egress guard. `trackers` made before the page was (so
 * its first requests are counted) are passed in; by default they are made here.
 */
export function newRunSession(
  runId: string,
  context: BrowserContext,
  page: Page,
  proxy: EgressProxy | undefined,
  trackers: (page: Page) => NetworkTracker = trackContextNetwork(context),
): RunSession {
  const net = trackers(page);
  const session: RunSession = {
    runId,
    context,
    page,
    masks: [],
    net,
    pages: [{ page, net }],
    trackers,
    ...(proxy ? { egress: sessionEgress(proxy, context) } : {}),
  };
  if (proxy) watchRefusedNavigations(session, proxy, page);
  return session;
}

export function watchRefusedNavigations(session: RunSession, proxy: EgressProxy, page: Page): void {
  // WebSockets are no `request` of the context: note their destinations here.
  page.on('websocket', (ws) => notePageTarget(session.egress!.pageTargets, ws.url()));
  page.on('response', (response) => {
    const request = response.request();
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame() || response.headers()[DENIED_HEADER] !== 'denied') return;
    const refusal = proxy.refusalOf(response.url());
    if (refusal) session.egress!.deniedNavigation = refusal;
  });
  page.on('requestfailed', (request) => {
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    const refusal = proxy.refusalOf(request.url());
    if (refusal) session.egress!.deniedNavigation = refusal;
  });
}
