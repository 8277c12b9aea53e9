import type { CDPSession, Page } from 'playwright-core';
import type { RunSession } from '../browser-pool.js';
import { screenshotMask } from './masking.js';

/**
 * Step screenshots (docs/browser.md, "Screenshots"). Two ways:
 *
 * - `captureUnmasked`: on a page with nothing to black out (the common case), one CDP
 *   `Page.captureScreenshot` of the viewport over the page's own CDP session, requested when the step
 *   ends and not waited for. Chromium answers with the first frame it draws after the request (about
 *   30 ms later, most of it waiting for the frame), while the run goes on. The picture is a JPEG of the
 *   viewport at its own size: a capture scaled to 0.75 costs the browser more CPU, not less; only half
 *   size costs less, and its text is hard to read (bench/capture.bench.mjs).
 * - `captureMasked`: with a password input or a field a secret value went into on the page,
 *   Playwright's screenshot paints the masks into the capture itself, so no unmasked pixel is ever
 *   stored. It adds elements over the page while it runs, so the step waits for it.
 */

/** Whether the run's current page has anything to black out: a password input, or a field a secret value went into. */
export async function isMasked(s: RunSession): Promise<boolean> {
  const page = s.page;
  return s.masks.some((m) => m.page() === page) || (await page.locator('input[type=password]').count()) > 0;
}

/**
 * Request the picture of the page as it is now; resolves with the JPEG once Chromium drew and encoded
 * it, or undefined when it could not (the page closed or went between documents meanwhile). Never rejects.
 */
export async function captureUnmasked(s: RunSession, quality: number): Promise<Buffer | undefined> {
  const page = s.page;
  const cdp = await cdpOf(s, page);
  if (page.isClosed()) return undefined;
  try {
    if (cdp) {
      const { data } = await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality, optimizeForSpeed: true });
      return Buffer.from(data, 'base64');
    }
  } catch {
    // The page went between documents, or its CDP session closed: Playwright's way below.
  }
  // Without changing the page (no caret hiding, no animation freezing): the next step may be acting.
  return page.screenshot({ type: 'jpeg', quality, caret: 'initial' }).catch(() => undefined);
}

/** The picture of a page with masks, painted into the capture (the step waits for it). */
export function captureMasked(s: RunSession, quality: number): Promise<Buffer> {
  return s.page.screenshot({ type: 'jpeg', quality, mask: screenshotMask(s), maskColor: '#000000', animations: 'disabled', caret: 'hide' });
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
