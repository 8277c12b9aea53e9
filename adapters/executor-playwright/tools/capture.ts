import type { CDPSession, Page } from 'playwright-core';
import type { RunSession } from '../browser-pool.js';
import { screenshotMask } from './masking.js';

/**
 * The JPEG of a step's screenshot. With anything to black out on the page (a password input, a field
 * a secret value went into), Playwright's screenshot paints the masks into the capture itself, so no
 * unmasked pixel is ever stored. With nothing to mask (the common case), one `Page.captureScreenshot`
 * over the page's own CDP session: the same viewport picture without Playwright's preparation round
 * trips (caret hiding, animation freezing in every frame), about half the time per step (measured in
 * bench/hosted-browser.bench.mjs). Its caret and animations are as the page shows them.
 */
export async function captureJpeg(s: RunSession, quality: number, masked: boolean): Promise<Buffer> {
  const page = s.page;
  if (!masked) {
    const cdp = await cdpOf(s, page);
    if (cdp) {
      try {
        const { data } = await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality, optimizeForSpeed: true });
        return Buffer.from(data, 'base64');
      } catch {
        // The page went between documents, or the session closed: Playwright's way below.
      }
    }
  }
  return page.screenshot({ type: 'jpeg', quality, mask: screenshotMask(s), maskColor: '#000000', animations: 'disabled', caret: 'hide' });
}

/** Whether the run's current page has anything to black out: a password input, or a field a secret value went into. */
export async function isMasked(s: RunSession): Promise<boolean> {
  const page = s.page;
  return s.masks.some((m) => m.page() === page) || (await page.locator('input[type=password]').count()) > 0;
}

const sessions = new WeakMap<Page, Promise<CDPSession | undefined>>();

/** One CDP session per page, opened on its first screenshot and gone with the page. */
function cdpOf(s: RunSession, page: Page): Promise<CDPSession | undefined> {
  let cdp = sessions.get(page);
  if (!cdp) {
    cdp = s.context.newCDPSession(page).catch(() => undefined);
    sessions.set(page, cdp);
  }
  return cdp;
}
