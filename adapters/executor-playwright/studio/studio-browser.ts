import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Browser, CDPSession, FileChooser, Page } from 'playwright-core';
import { FlowError, isFlowError } from '../../../src/errors.js';
import type { StudioBrowser, StudioPage, StudioPageHandlers, StudioViewport } from '../../../src/ports/studio.js';
import type { EgressGuard } from '../../../src/tools/egress.js';
import { newRunSession, type RunSession } from '../browser-pool.js';
import { DENIED_HEADER, startEgressProxy } from '../egress-proxy.js';
import { launchChromium } from '../launch.js';
import type { ResolveBrowserOptions } from '../resolve-browser.js';
import { installTimerCounter, trackContextNetwork } from '../settle.js';
import { CAPTURE_SCRIPT } from './page-script.generated.js';
import { replayInSession } from './replay.js';
import { startStudioInput } from './studio-input.js';

/**
 * The studio's browser over Chromium (playwright-core): one browser per service process, launched on
 * the first session, a fresh context per session. Frames come from CDP `Page.startScreencast` (JPEG),
 * input goes in as CDP `Input.dispatchMouseEvent` / `Input.insertText` and, for keys, Playwright's
 * keyboard (which sends `Input.dispatchKeyEvent` with the key codes of its US layout). The capture
 * script (page-script.ts) runs in every page through `addInitScript` and reports through an exposed
 * binding. Mouse moves are coalesced: while one is being dispatched only the latest waiting one is kept.
 *
 * Drags: CDP drag interception is on for the page (`Input.setInterceptDrags`), so an HTML5 drag the
 * page starts is handed to us (`Input.dragIntercepted`, with its drag data) instead of waiting for an
 * OS drag loop headless Chromium does not have; the moves that follow are relayed as
 * `Input.dispatchDragEvent` `dragOver`, the release as `drop` (Escape: `dragCancel`), as Playwright's
 * own mouse does. A pointer drag (no HTML5 drag starts) stays plain mouse events with the button held.
 * File choosers are intercepted (Playwright's `filechooser`): the handler is told, and `setFiles`
 * answers the chooser.
 */

export interface StudioBrowserOptions extends Pick<ResolveBrowserOptions, 'executablePath' | 'env'> {
  /** Default true. */
  headless?: boolean;
  /**
   * The egress guard of runs (createEgressGuard with the service's allowlist): every request of a
   * studio context then goes through a guarded proxy of its own, loopback included, so the studio
   * reaches only what runs may reach. Without it the studio reaches what the host reaches.
   */
  egress?: EgressGuard;
}

const BINDING = '__flowctlStudio';
/** The message a replay ends with, through the binding itself: every report sent before it has arrived. */
const BARRIER = '__flowctlReplayBarrier';
/** The longest commitTyping waits for the input queue, then for the page's answer (caps a hang only). */
const COMMIT_WAIT_MS = 5000;

/** `p`, or undefined once `ms` have passed. */
function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * In the page (main world): the capture script settles its typing (keydowns whose dispatch is over,
 * the dirty field committed: page-typing.ts), then a barrier message goes through the binding itself.
 * With `blur`, the focused element is blurred first (a replay's end: its change would report again).
 */
function settleAndBarrier([binding, barrier, blur]: readonly [string, string, boolean]): unknown {
  const w = window as unknown as Record<string, unknown>;
  if (blur) (document.activeElement as HTMLElement | null)?.blur?.();
  const settle = w.__flowctlStudioTypingSettle;
  if (typeof settle === 'function') settle();
  const fn = w[binding];
  return typeof fn === 'function' ? (fn as (m: unknown) => Promise<void>)({ kind: barrier }) : undefined;
}

/** JPEG quality by frame area: smaller canvases get sharper frames for the same bytes. */
export function screencastQuality(viewport: StudioViewport): number {
  const area = viewport.width * viewport.height;
  return area <= 800 * 600 ? 80 : area <= 1280 * 800 ? 70 : 55;
}

export function createStudioBrowser(options: StudioBrowserOptions = {}): StudioBrowser {
  let browser: Promise<Browser> | undefined;
  const pages = new Set<StudioPage>();
  let disposed = false;

  async function theBrowser(): Promise<Browser> {
    if (disposed) throw new FlowError('studio_disposed', '[flowctl] [studio] the studio browser was disposed');
    if (browser) {
      const b = await browser.catch(() => undefined);
      if (b?.isConnected()) return b;
    }
    // playwright-core loads on the first session, not with the service (an API process that never
    // opens the studio does not carry it: bench/RESULTS.md#scale).
    browser = launchChromium({
      ...(options.executablePath ? { executablePath: options.executablePath } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.headless !== undefined ? { headless: options.headless } : {}),
    });
    return browser;
  }

  async function open(opts: { url: string; viewport: StudioViewport } & StudioPageHandlers): Promise<StudioPage> {
    const b = await theBrowser();
    const proxy = options.egress ? await startEgressProxy(options.egress) : undefined;
    const context = await b
      .newContext({
        viewport: opts.viewport,
        acceptDownloads: false,
        serviceWorkers: 'block',
        ...(proxy ? { proxy: { server: proxy.server, bypass: '<-loopback>' } } : {}),
      })
      .catch(async (err: unknown) => {
        await proxy?.close();
        throw err;
      });
    context.on('close', () => void proxy?.close());
    let closed = false;
    let page!: Page;
    let cdp!: CDPSession;
    let viewport = { ...opts.viewport };
    /** While a replay runs, what the page reports is the replay's doing, not the user's: dropped. */
    let replaying: AbortController | undefined;
    let session!: RunSession;
    /**
     * The latest `typing` the page reported that no `fill` has committed yet (page-typing.ts): the
     * browser commits it itself when the page cannot (a navigation, commitTyping, close). `key` names
     * the field (its target as JSON).
     */
    let pending: { key: string; target: unknown; value: unknown; secret: boolean; field: unknown } | null = null;
    /** The fill last committed from `pending`: the page's own fill of the same field and value, arriving after it (a race with a navigation), is that step again. */
    let committed: string | null = null;
    const commitPending = () => {
      const p = pending;
      pending = null;
      if (!p || closed || replaying) return;
      committed = `${p.key}\n${p.secret ? '' : String(p.value)}`;
      opts.onAction(
        p.secret ? { kind: 'fill', target: p.target, secret: true, field: p.field } : { kind: 'fill', target: p.target, value: p.value, field: p.field },
      );
    };
    try {
      await context.exposeBinding(BINDING, (source, message: unknown) => {
        if (closed || replaying || source.page !== page || message === null || typeof message !== 'object') return;
        const m = message as { kind?: unknown; target?: unknown; value?: unknown; secret?: unknown; field?: unknown };
        if (m.kind === BARRIER) return;
        if (m.kind === 'typing') {
          // Kept, not reported: the page commits it as a fill (or the browser does, above).
          committed = null;
          pending = { key: JSON.stringify(m.target ?? null), target: m.target, value: m.value, secret: m.secret === true, field: m.field };
          return;
        }
        if (m.kind === 'fill') {
          const key = JSON.stringify(m.target ?? null);
          if (pending?.key === key) pending = null;
          const same = committed === `${key}\n${m.secret === true ? '' : String(m.value)}`;
          committed = null;
          if (same) return;
        } else committed = null;
        opts.onAction(message as never);
      });
      await context.addInitScript({ content: CAPTURE_SCRIPT });
      // As in a run's context: a replay's steps settle on the page's short timers too (settle.ts).
      await installTimerCounter(context);
      const trackers = trackContextNetwork(context);
      page = await context.newPage();
      // The page as the executor's browser tools see a run's page (a replay runs them on it).
      session = newRunSession('studio', context, page, proxy, trackers);
      // One page per session: new tabs and popups are closed, with a word to the user.
      context.on('page', (other) => {
        if (other === page) return;
        void other.close().catch(() => {});
        opts.onNotice('new tabs and popups are not supported in the studio: it was closed. Open its address with the address bar instead.');
      });
      page.on('dialog', (dialog) => {
        opts.onNotice(`the page opened a ${dialog.type()} dialog ("${dialog.message().slice(0, 120)}"): dismissed (dialogs are not captured)`);
        void dialog.dismiss().catch(() => {});
      });
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) opts.onNavigated?.(frame.url());
      });
      page.on('domcontentloaded', () => opts.onLoaded?.(page.url(), false));
      page.on('load', () => opts.onLoaded?.(page.url(), true));
      if (proxy) {
        // A page the guard refuses: say so (the page itself shows the proxy's refusal or an error page).
        const refused = (url: string) => {
          const refusal = proxy.refusalOf(url);
          if (refusal) opts.onNotice(`the studio may not reach ${refusal.target}: ${refusal.error.message.replace(/^(\[[^\]]+\]\s*)+/, '')}`);
        };
        page.on('response', (r) => {
          if (r.request().isNavigationRequest() && r.request().frame() === page.mainFrame() && r.headers()[DENIED_HEADER] === 'denied') refused(r.url());
        });
        page.on('requestfailed', (r) => {
          if (r.isNavigationRequest() && r.frame() === page.mainFrame()) refused(r.url());
        });
      }
      // File choosers: intercepted (no dialog), the last one kept until it is answered.
      let chooser: FileChooser | null = null;
      let fileDir: string | undefined;
      let fileSets = 0;
      if (opts.onFileChooser) {
        page.on('filechooser', (fc) => {
          chooser = fc;
          void (async () => {
            let found: { target: unknown; accept: string } = { target: undefined, accept: '' };
            // Only the top document's capture script names targets (frames are not captured).
            if (
              (await fc
                .element()
                .ownerFrame()
                .catch(() => null)) === page.mainFrame()
            ) {
              // In the page's main world, where the capture script is (an element handle's own evaluate runs in a utility world).
              found = await page
                .evaluate((node) => {
                  const hook = (window as unknown as { __flowctlStudioTarget?: (e: Element) => unknown }).__flowctlStudioTarget;
                  return { target: typeof hook === 'function' ? hook(node as Element) : undefined, accept: (node as HTMLInputElement).accept ?? '' };
                }, fc.element())
                .catch(() => found);
            }
            if (closed || chooser !== fc) return;
            opts.onFileChooser!({ target: found.target, multiple: fc.isMultiple(), accept: String(found.accept ?? '').slice(0, 500) });
          })();
        });
      }
      page.on('crash', () => opts.onGone?.('the page crashed'));
      context.on('close', () => {
        if (!closed) opts.onGone?.('the browser context closed');
      });
      cdp = await context.newCDPSession(page);
      // A main-frame navigation to another document: the typing its page did not commit is committed
      // now, before the new document reports anything (same-document navigations are not this event).
      cdp.on('Page.frameNavigated', (e) => {
        if (e.frame.parentId === undefined) commitPending();
      });
      await cdp.send('Page.enable');
      cdp.on('Page.screencastFrame', (f) => {
        if (closed) return;
        let acked = false;
        const ack = () => {
          if (acked || closed) return;
          acked = true;
          cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
        };
        opts.onFrame({ data: f.data, width: Math.round(f.metadata.deviceWidth), height: Math.round(f.metadata.deviceHeight) }, ack);
      });
      const startScreencast = () =>
        cdp.send('Page.startScreencast', {
          format: 'jpeg',
          quality: screencastQuality(viewport),
          maxWidth: viewport.width,
          maxHeight: viewport.height,
          everyNthFrame: 1,
        });
      await startScreencast();
      // The viewer's input, in order; HTML5 drags the page starts are intercepted (studio-input.ts).
      const inputQueue = await startStudioInput(page, cdp, { isClosed: () => closed, accepting: () => !(closed || replaying), onNotice: opts.onNotice });
      await page.goto(opts.url, { waitUntil: 'commit' }).catch((err: Error) => opts.onNotice(`could not open ${opts.url}: ${err.message.split('\n')[0]}`));

      const studioPage: StudioPage = {
        get viewport() {
          return { ...viewport };
        },
        async replay(steps, replayOptions) {
          if (closed) throw new FlowError('replay_failed', '[flowctl] [studio] the page is closed', { data: { step: null, index: 0, code: 'page_closed' } });
          if (replaying)
            throw new FlowError('replay_failed', '[flowctl] [studio] a replay is already running', { data: { step: null, index: 0, code: 'busy' } });
          const controller = new AbortController();
          replaying = controller;
          try {
            await replayInSession(session, steps, controller.signal, replayOptions);
          } finally {
            // The focused field's change event (a replayed fill) fires on its blur: now, still dropped.
            // Then a barrier through the binding: the reports sent before it are all delivered (and
            // dropped) by the time it answers, so none is taken for the user's.
            // The capture script's typing is settled first (its reports dropped too), and what it
            // reported is no typing of the user's.
            await page.evaluate(settleAndBarrier, [BINDING, BARRIER, true] as const).catch(() => {});
            pending = null;
            if (replaying === controller) replaying = undefined;
          }
        },
        async commitTyping() {
          if (closed || replaying) return;
          // The viewer's keys sent before are in the page first (bounded: input may keep coming).
          await within(inputQueue.drained(), COMMIT_WAIT_MS);
          if (closed || replaying) return;
          await within(
            page.evaluate(settleAndBarrier, [BINDING, BARRIER, false] as const).catch(() => {}),
            COMMIT_WAIT_MS,
          );
          // What the page did not commit (it did not answer): the latest typing it reported.
          commitPending();
        },
        input(input) {
          inputQueue.input(input);
        },
        async navigate(url) {
          await page.goto(url, { waitUntil: 'commit' });
        },
        async extract(field, extractOptions) {
          const armed = await page.evaluate(
            ([f, all]) => {
              const hook = (window as unknown as { __flowctlStudioExtract?: (f: string | null, all?: boolean) => void }).__flowctlStudioExtract;
              if (typeof hook !== 'function') return false;
              hook(f, all);
              return true;
            },
            [field, extractOptions?.all === true] as const,
          );
          if (!armed) throw new FlowError('studio_not_ready', '[flowctl] [studio] the page has no capture script yet');
        },
        async setFiles(files) {
          const fc = chooser;
          if (!fc) throw new FlowError('no_file_chooser', '[flowctl] [studio] no file chooser is open');
          for (const f of files) {
            if (f.name === '' || f.name === '.' || f.name === '..' || basename(f.name) !== f.name || /[\\/\0]/.test(f.name)) {
              throw new FlowError('invalid_file_name', `[flowctl] [studio] ${JSON.stringify(f.name.slice(0, 60))} is not a file name`);
            }
          }
          chooser = null;
          // Through files on disk: Chromium reads them itself (DOM.setFileInputFiles), where Playwright's
          // in-memory payloads cross the protocol as base64 (seconds for 10 MiB). The folder lives as
          // long as the page, which may read the files at any time.
          fileDir ??= await mkdtemp(join(tmpdir(), 'flowctl-studio-'));
          const dir = join(fileDir, String(++fileSets));
          await mkdir(dir);
          const paths: string[] = [];
          for (const f of files) {
            const path = join(dir, f.name);
            await writeFile(path, f.bytes);
            paths.push(path);
          }
          await fc.setFiles(paths);
        },
        cancelFileChooser() {
          chooser = null;
        },
        async resize(next) {
          viewport = { ...next };
          await page.setViewportSize(viewport);
          await cdp.send('Page.stopScreencast').catch(() => {});
          await startScreencast();
        },
        async close() {
          if (closed) return;
          // The typing the page did not commit is the last step (the socket's teardown committed it already when it could).
          commitPending();
          closed = true;
          replaying?.abort();
          pages.delete(studioPage);
          await cdp?.send('Page.stopScreencast').catch(() => {});
          await context.close().catch(() => {});
          if (fileDir) await rm(fileDir, { recursive: true, force: true }).catch(() => {});
        },
      };
      pages.add(studioPage);
      return studioPage;
    } catch (err) {
      closed = true;
      await context.close().catch(() => {});
      throw err;
    }
  }

  /** The egress rule on a page address, before any page asks for it (the proxy applies the same rule). */
  async function refusal(url: string): Promise<{ target: string; message: string } | undefined> {
    const guard = options.egress;
    if (!guard) return undefined;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    try {
      if (guard.precheck(host, port) === undefined) await guard.resolve(host, port);
      return undefined;
    } catch (err) {
      if (!isFlowError(err, 'egress_denied') || (err.data as { reason?: string } | undefined)?.reason === 'unresolved') return undefined;
      // "connection to h:p refused: h:p is a loopback address, which ..." -> "it is a loopback address, which ..."
      const text = err.message.replace(/^(\[[^\]]+\]\s*)+/, '').replace(/\s*\(add it to the egress allowlist to permit it\)$/, '');
      const why = /refused: \S+ (.*)$/.exec(text)?.[1];
      return { target: `${u.hostname}:${port}`, message: why ? `it ${why.replace('the tool policy', 'the egress rule')}` : text };
    }
  }

  return {
    open,
    refusal,
    openPages: () => pages.size,
    async dispose() {
      disposed = true;
      await Promise.all([...pages].map((p) => p.close()));
      const b = await browser?.catch(() => undefined);
      await b?.close().catch(() => {});
    },
  };
}
