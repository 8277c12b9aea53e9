import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { imageRegions } from '../helpers/image-pixels.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Every page of the web app at 390, 768 and 1280 px, in real Chromium against the shipped assembly:
 * no sideways scrolling of the page, a readable title (the pixels behind the h1 against its color,
 * WCAG contrast >= 4.5), the navigation behind a menu button on narrow screens (the first screen is
 * the page) and always shown on wide ones. The owner signs up in the browser; the data each page
 * needs is seeded through the REST API with the same session. Screenshots of every page at every
 * width go to test-artifacts/screens/<page>-<width>.png (gitignored), to be looked at.
 */

const SHOTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts', 'screens');
const WIDTHS = [390, 768, 1280] as const;
const NARROW = 900; // styles.css: the one-column rules

let dir: string;
let h: HostedFixture;
let browser: Browser;
let site: { url: string; server: Server };
const owner = { email: 'grace@example.test', password: 'a long passphrase' };
const seeded = { id: '', brokenId: '', runId: '', failedRunId: '' };
/** The member with an email long enough to be cut in a table (the audit log's target). */
const longEmail = 'ada.lovelace.with.a.long.address@analytical-engines.example.test';

/** The site the automations work on: a search form and its result. */
async function startShop() {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<h1>Shop</h1><form id="f"><label for="q">Product</label><input id="q" name="q"><button type="submit">Search</button></form>
<p id="result"></p>
<script>document.getElementById('f').addEventListener('submit',function(e){e.preventDefault();
document.getElementById('result').textContent='Results for '+document.getElementById('q').value;});</script></body></html>`;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/shop')) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const ops = (extract: string) => [
  { kind: 'navigate', url: `${site.url}/shop` },
  { kind: 'fill', target: { label: 'Product' }, value: 'apples', slot: 'query' },
  { kind: 'click', target: { role: 'button', name: 'Search' } },
  { kind: 'extract', target: extract, name: 'result' },
];

async function ok(r: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const res = await r;
  expect([res.status, res.body?.error]).toEqual([status, undefined]);
  return res.body;
}

async function publish(c: Client, name: string, extract: string): Promise<string> {
  const a = (
    await ok(c.call('POST', '/api/automations', { name, site: `${site.url}/shop`, task: `Search the shop for a product and read the result (${name})` }), 201)
  ).automation;
  await ok(c.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops(extract), input_slots: ['query'] }));
  await ok(c.call('POST', `/api/authoring/${a.id}/publish`));
  return a.id as string;
}

/** Everything the pages show: two automations (one failing), runs, keys, a secret, a schedule, a member. */
async function seed(c: Client): Promise<void> {
  seeded.id = await publish(c, 'shop-search', '#result');
  seeded.brokenId = await publish(c, 'shop-search-with-a-rather-long-name-that-drifted', '#gone');
  const key = (await ok(c.call('POST', '/api/keys', { mode: 'live', name: 'ci pipeline', automations: ['shop-search'] }), 201)).secret as string;
  await ok(c.call('POST', '/api/keys', { mode: 'test', name: 'staging' }), 201);
  const all = (await ok(c.call('POST', '/api/keys', { mode: 'live', name: 'everything' }), 201)).secret as string;
  await ok(c.call('PUT', '/api/secrets/shop_password', { value: 'hunter2 but longer' }));
  await ok(c.call('PUT', '/api/secrets/api_token_for_the_partner_portal', { value: 't0ken' }));
  await ok(c.call('POST', `/api/automations/${seeded.id}/schedules`, { cron: '0 7 * * 1-5', inputs: { query: 'pears' }, timezone: 'Europe/Berlin' }), 201);
  const run = async (k: string, flow: string, query: string) => {
    const res = await fetch(`${h.url}/v1/run/${flow}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { query } }),
    });
    return (await res.json()) as { run_id: string; status: string };
  };
  const good = await run(key, 'shop-search', 'pears');
  expect(good.status).toBe('succeeded');
  seeded.runId = good.run_id;
  await run(key, 'shop-search', 'a product name long enough to be clamped in the runs table of the web app');
  const bad = await run(all, 'shop-search-with-a-rather-long-name-that-drifted', 'plums');
  expect(bad.status).toBe('failed');
  seeded.failedRunId = bad.run_id;
  const member = new Client(h.url);
  await member.signup(longEmail);
  await ok(c.call('POST', '/api/members', { email: longEmail, role: 'member' }), 201);
}

/** Every page of the app behind a sign-in: a file-name-safe name and the path. */
const pages = (): [string, string][] => [
  ['automations', '/automations'],
  ['automation-new', '/automations/new'],
  ...['overview', 'capture', 'versions', 'schedules', 'executions', 'live', 'flowspec', 'keys', 'secrets'].map((t): [string, string] => [
    `automation-${t}`,
    `/automations/${seeded.id}/${t}`,
  ]),
  ['automation-failing', `/automations/${seeded.brokenId}/overview`],
  ['runs', '/runs'],
  ['run', `/runs/${seeded.runId}`],
  ['run-failed', `/runs/${seeded.failedRunId}`],
  ['keys', '/keys'],
  ['secrets', '/secrets'],
  ['members', '/members'],
  ['audit', '/audit'],
  ['org-new', '/orgs/new'],
  ['not-found', '/no-such-page'],
];

/** WCAG relative luminance and contrast ratio. */
const luminance = ([r, g, b]: number[]) => {
  const lin = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r!) + 0.7152 * lin(g!) + 0.0722 * lin(b!);
};
const contrast = (a: number[], b: number[]) => {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
};

/**
 * The worst contrast of the page title against what is painted behind it: the h1 is hidden
 * (visibility), its box screenshotted, and every pixel compared with the h1's color.
 */
async function titleContrast(page: Page): Promise<number> {
  const h1 = page.locator('h1').first();
  const box = (await h1.boundingBox())!;
  const color = await h1.evaluate((e) => getComputedStyle(e).color);
  const rgb = color
    .match(/[\d.]+/g)!
    .slice(0, 3)
    .map(Number);
  await h1.evaluate((e) => (e.style.visibility = 'hidden'));
  const png = await page.screenshot({ clip: box });
  await h1.evaluate((e) => (e.style.visibility = ''));
  const { width, height, regions } = await imageRegions(page, `data:image/png;base64,${png.toString('base64')}`, [
    { x: 0, y: 0, width: Math.floor(box.width), height: Math.floor(box.height) },
  ]);
  expect(width * height).toBeGreaterThan(0);
  const px = regions[0]!;
  let worst = Infinity;
  for (let i = 0; i < px.length; i += 4) worst = Math.min(worst, contrast(rgb, [px[i]!, px[i + 1]!, px[i + 2]!]));
  return worst;
}

/** The page is on screen: its title shown, nothing loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading, .spinner').length === 0);
}

async function checkPage(page: Page, name: string, width: number): Promise<void> {
  const what = `${name} at ${width}px`;
  await settled(page);
  await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  const overflow = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(overflow.scroll, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(overflow.client);
  const h1 = page.locator('h1').first();
  expect(await h1.isVisible(), what).toBe(true);
  expect(await titleContrast(page), `${what}: title contrast`).toBeGreaterThanOrEqual(4.5);
}

/**
 * The audit log's table: the long member email in the Target column is cut with an ellipsis (the
 * cell's title has it in full), and on a wide screen the table fits its card, Details included; on
 * a narrow one it scrolls sideways inside the card only (checkPage: never the page).
 */
async function checkAuditTable(page: Page, width: number): Promise<void> {
  const what = `audit at ${width}px`;
  // The email comes with the members list, which may load after the entries.
  const row = page.locator('tbody tr', { hasText: longEmail });
  await row.waitFor();
  const cell = row.locator('td').nth(3);
  const title = (await cell.getAttribute('title')) ?? '';
  expect(title.split('\n'), `${what}: the target's title`).toEqual([`member:${longEmail}`, expect.stringMatching(/^member:[0-9a-f-]{36}$/)]);
  const shown = await cell.locator('code').evaluate((e) => ({ client: e.clientWidth, scroll: e.scrollWidth, overflow: getComputedStyle(e).textOverflow }));
  expect([shown.overflow, shown.scroll > shown.client], `${what}: the target cut with an ellipsis`).toEqual(['ellipsis', true]);
  const wrap = page.locator('.table-wrap');
  const size = await wrap.evaluate((e) => ({ client: e.clientWidth, scroll: e.scrollWidth }));
  if (width > NARROW) {
    expect(size.scroll, `${what}: the table scrolls inside its card`).toBeLessThanOrEqual(size.client);
    return;
  }
  // What the sideways scroll shows at its end (Target and Details), to be looked at too.
  await wrap.evaluate((e) => (e.scrollLeft = e.scrollWidth));
  await page.screenshot({ path: join(SHOTS, `audit-table-end-${width}.png`), fullPage: true });
  await wrap.evaluate((e) => (e.scrollLeft = 0));
}

/** The shell's navigation: folded behind the menu button on narrow screens, always shown on wide ones. */
async function checkNavigation(page: Page, name: string, width: number): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  const runsLink = page.locator('.sidebar').getByRole('link', { name: 'Runs', exact: true });
  if (width > NARROW) {
    expect([await menu.isVisible(), await runsLink.isVisible()]).toEqual([false, true]);
    return;
  }
  // The first screen is the page: its title inside the viewport, the navigation folded.
  const box = (await page.locator('h1').first().boundingBox())!;
  expect(box.y + box.height, `${name} at ${width}px: the title on the first screen`).toBeLessThanOrEqual(page.viewportSize()!.height);
  expect(await runsLink.isVisible()).toBe(false);
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  await menu.click();
  await runsLink.waitFor();
  expect(await menu.getAttribute('aria-expanded')).toBe('true');
  for (const link of ['Automations', 'API keys', 'Secrets', 'Members', 'Audit log'])
    expect(await page.locator('.sidebar').getByRole('link', { name: link, exact: true }).isVisible(), link).toBe(true);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} at ${width}px with the menu open`).toBeLessThanOrEqual(0);
  if (name === 'automations') await page.screenshot({ path: join(SHOTS, `menu-open-${width}.png`) });
  await menu.click();
  await runsLink.waitFor({ state: 'hidden' });
}

async function contextAt(width: number): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width, height: width < 500 ? 844 : width < 1000 ? 1024 : 860 }, baseURL: h.url });
  // Waits end on DOM events; this only ends a hang.
  context.setDefaultTimeout(60_000);
  return context;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-web-screens-'));
  await mkdir(SHOTS, { recursive: true });
  site = await startShop();
  h = await startHosted({ egressAllow: FIXTURE_SITES }, {}, { dataDir: join(dir, 'pgdata') });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
  await rm(dir, { recursive: true, force: true });
});

describe('every page of the web app at 390, 768 and 1280 px', () => {
  let cookie = '';

  it('signs up in the browser (narrow) and seeds the data of every page through the API', async () => {
    const context = await contextAt(390);
    try {
      const page = await context.newPage();
      await page.goto('/signup');
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByLabel('Organization name').fill('Compilers and Other Wonderful Machines Ltd');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByText('No automations yet').waitFor();
      cookie = (await context.cookies()).find((c) => c.name === 'svc_session')!.value;
    } finally {
      await context.close();
    }
    const c = new Client(h.url);
    c.cookie = cookie;
    await seed(c);
  }, 180_000);

  it('the log-in and sign-up pages: one message for a wrong password', async () => {
    for (const width of WIDTHS) {
      const context = await contextAt(width);
      try {
        const page = await context.newPage();
        await page.goto('/signup');
        await checkPage(page, 'signup', width);
        await page.goto('/login');
        await page.getByLabel('Email').fill(owner.email);
        await page.getByLabel('Password').fill('not the password');
        await page.getByRole('button', { name: 'Log in' }).click();
        const alert = page.getByRole('alert');
        await alert.waitFor();
        const text = (await alert.textContent())!;
        expect(text).toBe('Wrong email or password');
        await checkPage(page, 'login-error', width);
      } finally {
        await context.close();
      }
    }
  }, 180_000);

  for (const width of WIDTHS) {
    it(`every signed-in page at ${width}px`, async () => {
      const context = await contextAt(width);
      try {
        await context.addCookies([{ name: 'svc_session', value: cookie, url: h.url }]);
        const page = await context.newPage();
        // Every page is checked; the failures are reported together.
        const failures: string[] = [];
        for (const [name, path] of pages()) {
          try {
            await page.goto(path);
            // Before the screenshot: the audit check waits until the member's email is shown.
            if (name === 'audit') await checkAuditTable(page, width);
            await checkPage(page, name, width);
            // "Watch live" is the automation page's tab only, never a header button too.
            if (/^automation-(?!new)/.test(name)) expect(await page.locator('a', { hasText: 'Watch live' }).count(), `${name}: Watch live`).toBe(1);
            await checkNavigation(page, name, width);
          } catch (err) {
            failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
          }
        }
        expect(failures).toEqual([]);
      } finally {
        await context.close();
      }
    }, 300_000);
  }

  it('step screenshots in the run inspector are large, and a click shows one full size', async () => {
    for (const width of [390, 1280]) {
      const context = await contextAt(width);
      try {
        await context.addCookies([{ name: 'svc_session', value: cookie, url: h.url }]);
        const page = await context.newPage();
        await page.goto(`/runs/${seeded.runId}`);
        const thumb = page.getByRole('button', { name: 'Screenshot after step navigate_1: show full size' });
        await thumb.and(page.locator(':enabled')).waitFor();
        const column = (await page.locator('.tl-item').first().boundingBox())!;
        const box = (await thumb.boundingBox())!;
        // As wide as the timeline's column allows (up to 560 px), not a stamp.
        expect(box.width, `thumbnail at ${width}px`).toBeGreaterThanOrEqual(Math.min(540, column.width - 40));
        await thumb.click();
        const full = page.getByRole('dialog', { name: 'Screenshot after step navigate_1' }).locator('img');
        await full.waitFor();
        expect((await full.boundingBox())!.width).toBeGreaterThan(box.width);
        await page.screenshot({ path: join(SHOTS, `run-screenshot-full-${width}.png`) });
      } finally {
        await context.close();
      }
    }
  }, 120_000);

  /**
   * The studio's canvas shows the remote page at the width it has (1:1, not scaled down), and a click on
   * the canvas lands on the element under it: the twin (the same page in the test's Chromium at the
   * remote viewport) says where the Search button is. A window made narrower resizes the remote page.
   */
  it('the studio canvas fits its width and maps clicks onto the page, before and after a resize', async () => {
    const context = await contextAt(1280);
    try {
      await context.addCookies([{ name: 'svc_session', value: cookie, url: h.url }]);
      const page = await context.newPage();
      const c = new Client(h.url);
      c.cookie = cookie;
      const draft = (await ok(c.call('POST', '/api/automations', { name: 'studio-fit', site: `${site.url}/shop`, task: 'Search' }), 201)).automation;
      await page.goto(`/automations/${draft.id}/capture`);
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.locator('[data-testid="studio-url"][data-state="complete"]').waitFor();
      const canvas = page.getByLabel('Remote browser');
      const clickSearch = async (steps: number) => {
        await waitUntil(async () => Number((await canvas.getAttribute('data-frames')) ?? 0) > 0, { what: 'a frame on the canvas' });
        const vp = { width: Number(await canvas.getAttribute('width')), height: Number(await canvas.getAttribute('height')) };
        const box = (await canvas.boundingBox())!;
        // 1:1 within the scroll bar's width: the page is not shown scaled down.
        expect(Math.abs(vp.width - box.width) / box.width, `canvas ${vp.width} px shown in ${box.width} px`).toBeLessThan(0.1);
        const twinContext = await browser.newContext({ viewport: vp });
        try {
          const twin = await twinContext.newPage();
          await twin.goto(`${site.url}/shop`);
          const b = (await twin.getByRole('button', { name: 'Search' }).boundingBox())!;
          // The canvas's place and scale as it is now (the twin's page took a while to open).
          await canvas.scrollIntoViewIfNeeded();
          const now = (await canvas.boundingBox())!;
          const scale = now.width / Number(await canvas.getAttribute('width'));
          await page.mouse.click(now.x + (b.x + b.width / 2) * scale, now.y + (b.y + b.height / 2) * scale);
        } finally {
          await twinContext.close();
        }
        const row = page
          .getByTestId('op-list')
          .locator('.op-row')
          .nth(steps - 1);
        await row.waitFor();
        expect(await row.textContent()).toContain('button "Search"');
        return vp;
      };
      const wide = await clickSearch(2);
      await page.screenshot({ path: join(SHOTS, 'studio-recording-1280.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await waitUntil(async () => Number(await canvas.getAttribute('width')) < wide.width * 0.5 && Number((await canvas.boundingBox())?.width) < 400, {
        what: 'the remote page resized to the narrow canvas',
      });
      await clickSearch(3);
      // A full-page capture draws the sticky top bar where the page is scrolled to (over the tabs, as
      // no user ever sees it): taken from the top, as the page first shows.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, 'studio-recording-390.png'), fullPage: true });
      // The top bar stays at the top as the page scrolls: what the keyboard focuses from further down
      // (a tab, the address bar) is scrolled into view below it, never behind it.
      const bar = (await page.locator('.topbar').boundingBox())!;
      for (const target of [page.getByRole('tab', { name: 'Record in the browser' }), page.getByLabel('Address')]) {
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await target.focus();
        const b = (await target.boundingBox())!;
        expect(b.y, `${await target.textContent()} focused at 390 px: below the top bar (${bar.y + bar.height} px)`).toBeGreaterThanOrEqual(bar.y + bar.height);
      }
      await page.screenshot({ path: join(SHOTS, 'studio-focus-390.png') });
    } finally {
      await context.close();
    }
  }, 180_000);
});
