import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { FlowError } from '../../../src/errors.js';
import type { StudioBrowser, StudioInput, StudioPage, StudioPageHandlers, StudioViewport } from '../../../src/ports/studio.js';
import type { EgressGuard } from '../../../src/tools/egress.js';
import { LAUNCH_FLAGS } from '../browser-pool.js';
import { DENIED_HEADER, startEgressProxy } from '../egress-proxy.js';
import { resolveBrowser, type ResolveBrowserOptions } from '../resolve-browser.js';
import { CAPTURE_SCRIPT } from './page-script.generated.js';

/**
 * The studio's browser over Chromium (playwright-core): one browser per service process, launched on
 * the first session, a fresh context per session. Frames come from CDP `Page.startScreencast` (JPEG),
 * input goes in as CDP `Input.dispatchMouseEvent` / `Input.insertText` and, for keys, Playwright's
 * keyboard (which sends `Input.dispatchKeyEvent` with the key codes of its US layout). The capture
 * script (page-script.ts) runs in every page through `addInitScript` and reports through an exposed
 * binding. Mouse moves are coalesced: while one is being dispatched only the latest waiting one is kept.
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

/** JPEG quality by frame area: smaller canvases get sharper frames for the same bytes. */
export function screencastQuality(viewport: StudioViewport): number {
  const area = viewport.width * viewport.height;
  return area <= 800 * 600 ? 80 : area <= 1280 * 800 ? 70 : 55;
}

const BUTTONS: Record<string, number> = { left: 1, right: 2, middle: 4, none: 0 };

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
    browser = (async () => {
      const { executablePath } = await resolveBrowser({ ...(options.executablePath ? { executablePath: options.executablePath } : {}), ...(options.env ? { env: options.env } : {}) });
      return chromium.launch({ executablePath, headless: options.headless ?? true, args: [...LAUNCH_FLAGS] });
    })();
    return browser;
  }

  async function open(opts: { url: string; viewport: StudioViewport } & StudioPageHandlers): Promise<StudioPage> {
    const b = await theBrowser();
    const proxy = options.egress ? await startEgressProxy(options.egress) : undefined;
    const context = await b
      .newContext({ viewport: opts.viewport, acceptDownloads: false, serviceWorkers: 'block', ...(proxy ? { proxy: { server: proxy.server, bypass: '<-loopback>' } } : {}) })
      .catch(async (err: unknown) => {
        await proxy?.close();
        throw err;
      });
    context.on('close', () => void proxy?.close());
    let closed = false;
    let page!: Page;
    let cdp!: CDPSession;
    let viewport = { ...opts.viewport };
    try {
      await context.exposeBinding(BINDING, (source, message: unknown) => {
        if (closed || source.page !== page || message === null || typeof message !== 'object') return;
        opts.onAction(message as never);
      });
      await context.addInitScript({ content: CAPTURE_SCRIPT });
      page = await context.newPage();
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
      page.on('crash', () => opts.onGone?.('the page crashed'));
      context.on('close', () => {
        if (!closed) opts.onGone?.('the browser context closed');
      });
      cdp = await context.newCDPSession(page);
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
        cdp.send('Page.startScreencast', { format: 'jpeg', quality: screencastQuality(viewport), maxWidth: viewport.width, maxHeight: viewport.height, everyNthFrame: 1 });
      await startScreencast();
      await page.goto(opts.url, { waitUntil: 'commit' }).catch((err: Error) => opts.onNotice(`could not open ${opts.url}: ${err.message.split('\n')[0]}`));

      // Input, in order; a move waiting behind another input is replaced by the next move.
      const queue: StudioInput[] = [];
      let running = false;
      let held = 0;
      const dispatch = async (input: StudioInput) => {
        if (input.type === 'mouse') {
          const base = { x: input.x, y: input.y, modifiers: input.modifiers ?? 0 };
          const button = input.button ?? 'left';
          if (input.action === 'move') {
            await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', ...base, button: 'none', buttons: held });
          } else if (input.action === 'wheel') {
            await cdp.send('Input.dispatchMouseEvent', { type: 'mouseWheel', ...base, deltaX: input.deltaX ?? 0, deltaY: input.deltaY ?? 0 });
          } else {
            held = input.action === 'down' ? held | BUTTONS[button]! : held & ~BUTTONS[button]!;
            await cdp.send('Input.dispatchMouseEvent', { type: input.action === 'down' ? 'mousePressed' : 'mouseReleased', ...base, button, buttons: held, clickCount: input.clickCount ?? 1 });
          }
        } else if (input.type === 'key') {
          try {
            if (input.action === 'down') await page.keyboard.down(input.key);
            else await page.keyboard.up(input.key);
          } catch {
            opts.onNotice(`unknown key ${JSON.stringify(input.key.slice(0, 20))}`);
          }
        } else {
          await cdp.send('Input.insertText', { text: input.text });
        }
      };
      const pump = async () => {
        if (running) return;
        running = true;
        try {
          while (queue.length > 0 && !closed) {
            const next = queue.shift()!;
            await dispatch(next).catch(() => {});
          }
        } finally {
          running = false;
        }
      };

      const studioPage: StudioPage = {
        get viewport() {
          return { ...viewport };
        },
        input(input) {
          if (closed) return;
          const last = queue[queue.length - 1];
          if (input.type === 'mouse' && input.action === 'move' && last?.type === 'mouse' && last.action === 'move') queue[queue.length - 1] = input;
          else queue.push(input);
          void pump();
        },
        async navigate(url) {
          await page.goto(url, { waitUntil: 'commit' });
        },
        async extract(field) {
          const armed = await page.evaluate((f) => {
            const hook = (window as unknown as { __flowctlStudioExtract?: (f: string | null) => void }).__flowctlStudioExtract;
            if (typeof hook !== 'function') return false;
            hook(f);
            return true;
          }, field);
          if (!armed) throw new FlowError('studio_not_ready', '[flowctl] [studio] the page has no capture script yet');
        },
        async resize(next) {
          viewport = { ...next };
          await page.setViewportSize(viewport);
          await cdp.send('Page.stopScreencast').catch(() => {});
          await startScreencast();
        },
        async close() {
          if (closed) return;
          closed = true;
          pages.delete(studioPage);
          await cdp?.send('Page.stopScreencast').catch(() => {});
          await context.close().catch(() => {});
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

  return {
    open,
    openPages: () => pages.size,
    async dispose() {
      disposed = true;
      await Promise.all([...pages].map((p) => p.close()));
      const b = await browser?.catch(() => undefined);
      await b?.close().catch(() => {});
    },
  };
}
