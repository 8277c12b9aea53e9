import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../../adapters/executor-playwright/launch.js';

/**
 * Chromium's own UI costs CPU even headless: from Chromium 156 every new window (every context) loads
 * the address bar's suggestion popup as a WebUI page in a renderer of its own, more CPU than a small
 * page's whole run. The launch flags (DISABLED_FEATURES) turn such UI off; this fails when a Chromium
 * brings a new one, so that it is found and turned off too (docs/browser.md, "Launch").
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium({});
});
afterAll(async () => {
  await browser?.close();
});

it('a new context and page bring no browser UI targets, only the page', async () => {
  const session = await browser.newBrowserCDPSession();
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto('data:text/html,<p>hi</p>');
  // The popup is created with the window; after a load its target would be listed.
  const { targetInfos } = (await session.send('Target.getTargets', { filter: [{}] })) as { targetInfos: { type: string; url: string }[] };
  expect(targetInfos.filter((t) => t.type === 'browser_ui').map((t) => t.url)).toEqual([]);
  expect(targetInfos.some((t) => t.type === 'page' && t.url.startsWith('data:'))).toBe(true);
  await context.close();
});
