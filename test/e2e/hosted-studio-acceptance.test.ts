import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The studio's acceptance, end to end in real Chromium: Playwright drives the web app in one Chromium,
 * and the web app drives the studio's remote Chromium through its canvas. A newcomer signs up, creates
 * an automation for a multi-page demo site served by this test (sign-in with a password, a search form
 * with a select, a drag-and-drop board with a file input, a result page), records a demonstration in the
 * studio (clicks, typing, a select, a drag, an upload, an extract), marks the product as an input slot
 * (the password is a secret slot by itself), sets the org secret, publishes, calls the automation
 * through the gateway with a new product, and reads the run in the inspector. The captured ops, run
 * through `flowctl record` and `flowctl compile` (the built CLI, spawned), give the published digest.
 * Screenshots go to test-artifacts/studio-acceptance/ (their paths are logged).
 */

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../../bin/flowctl.mjs');
const SHOTS = resolve(import.meta.dirname, '../../test-artifacts/studio-acceptance');
const PASSWORD = 'grocer-pass-5R';
const RECEIPT = Buffer.from('item,qty\nbread,1\nmilk,2\n');
const TASK = 'Sign in, search a product in an aisle, put bread in the basket, attach the receipt and read the order';

/** Every element the demonstration touches sits at a fixed place: left 40, width 300, height 32, at `top`. */
const box = (top: number, left = 40, width = 300, height = 32) =>
  `style="position:absolute;left:${left}px;top:${top}px;width:${width}px;height:${height}px;margin:0;box-sizing:border-box"`;
const at = (top: number, left = 40) => ({ x: left + 150, y: top + 16 });

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{margin:0;font:15px system-ui,sans-serif;color:#1d2939;background:#fafafa}h1{position:absolute;left:40px;top:8px;margin:0;font-size:22px}
label{position:absolute;left:360px;font-weight:600}input,select,button{font:inherit}button{background:#4f46e5;color:#fff;border:0;border-radius:6px}
.card{background:#fff;border:1px solid #d0d5dd;border-radius:6px;padding:6px 10px;cursor:grab}.zone{border:2px dashed #98a2b3;border-radius:8px;padding:8px}</style></head>
<body>${body}</body></html>`;
}

const esc = (s: string) => s.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function startGrocer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (text: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    const user = /(?:^|;\s*)who=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (url.pathname === '/' && req.method === 'GET') {
      return html(
        page(
          'Grocer: sign in',
          `<h1>Grocer</h1><form method="post" action="/login">
<label for="user" style="top:86px">Username</label><input id="user" name="user" autocomplete="off" ${box(80)}>
<label for="pass" style="top:146px">Password</label><input id="pass" type="password" name="password" ${box(140)}>
<button type="submit" ${box(200)}>Sign in</button></form>`,
        ),
      );
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const ok = form.get('password') === PASSWORD && (form.get('user') ?? '') !== '';
        res.writeHead(303, { location: ok ? '/search' : '/', ...(ok ? { 'set-cookie': `who=${encodeURIComponent(form.get('user')!)}; Path=/` } : {}) }).end();
      });
      return;
    }
    if (!user) return html(page('Grocer', '<h1>Not signed in</h1>'));
    if (url.pathname === '/search') {
      return html(
        page(
          'Grocer: search',
          `<h1>Search</h1><form method="get" action="/board">
<label for="product" style="top:86px">Product</label><input id="product" name="q" autocomplete="off" ${box(80)}>
<label for="aisle" style="top:146px">Aisle</label><select id="aisle" name="aisle" ${box(140)}><option value="produce">Produce</option><option value="bakery">Bakery</option><option value="dairy">Dairy</option></select>
<button type="submit" ${box(200)}>Search</button></form>`,
        ),
      );
    }
    if (url.pathname === '/board') {
      const q = url.searchParams;
      return html(
        page(
          'Grocer: basket',
          `<h1>${esc(q.get('q') ?? '')} in ${esc(q.get('aisle') ?? '')}</h1>
<div class="card" draggable="true" id="bread" ${box(80)}>Bread</div>
<div class="card" draggable="true" id="milk" ${box(130)}>Milk</div>
<div class="zone" data-testid="basket" aria-label="Basket" ${box(80, 420, 300, 120)}>Basket: <span id="basket-items"></span></div>
<label for="receipt" style="top:266px">Receipt</label><input type="file" id="receipt" accept=".csv" ${box(260)}>
<p id="file-status" style="position:absolute;left:420px;top:300px;margin:0"></p>
<button id="checkout" ${box(320)}>Check out</button>
<script>
const items = document.getElementById('basket-items');
for (const card of document.querySelectorAll('.card')) card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', card.textContent));
const zone = document.querySelector('[data-testid=basket]');
zone.addEventListener('dragover', (e) => e.preventDefault());
zone.addEventListener('drop', (e) => { e.preventDefault(); items.textContent = e.dataTransfer.getData('text/plain'); });
let receipt = 'none';
document.getElementById('receipt').addEventListener('change', async (e) => {
  const f = e.target.files[0];
  receipt = f ? f.name + ' (' + (await f.text()).trim().split('\\n').length + ' lines)' : 'none';
  document.getElementById('file-status').textContent = receipt;
});
document.getElementById('checkout').addEventListener('click', () => {
  location.href = '/result?' + new URLSearchParams({ q: ${JSON.stringify(q.get('q') ?? '')}, aisle: ${JSON.stringify(q.get('aisle') ?? '')}, basket: items.textContent, receipt });
});
</script>`,
        ),
      );
    }
    if (url.pathname === '/result') {
      const q = url.searchParams;
      const text = `Order for ${decodeURIComponent(user)}: ${q.get('q')} from ${q.get('aisle')}; basket ${q.get('basket') || 'empty'}; receipt ${q.get('receipt')}`;
      return html(page('Grocer: order', `<h1>Your order</h1><output class="order-summary" ${box(80, 40, 640)}>${esc(text)}</output>`));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let h: HostedFixture;
let site: { server: Server; url: string };
let browser: Browser;

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startGrocer();
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

async function shot(page: Page | Locator, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  const path = join(SHOTS, name);
  await page.screenshot({ path, ...options });
  console.log(`[studio-acceptance] screenshot ${path}`);
  return path;
}

describe('studio acceptance: record in the web app, publish, call, inspect', () => {
  it('a newcomer records click, type, select, drag, upload and extract through the canvas; the published automation runs with a new input; every step is in the inspector; the CLI gives the same digest', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, baseURL: h.url });
    context.setDefaultTimeout(60_000);
    const page = await context.newPage();

    // Sign up in the web app.
    await page.goto('/signup');
    await page.getByLabel('Email').fill('grocer@example.test');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByLabel('Organization name').fill('Grocer Inc');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/automations');

    // A new automation whose site is the demo.
    await page.goto('/automations/new');
    await page.getByLabel('Name').fill('grocery-order');
    await page.getByLabel('Site').fill(`${site.url}/`);
    await page.getByLabel('Task').fill(TASK);
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL('**/automations/*/capture');
    const id = /\/automations\/([^/]+)\/capture/.exec(page.url())![1]!;

    // Record.
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.locator('.studio-overlay').waitFor({ state: 'detached' });
    const list = page.getByTestId('op-list');
    const url = page.getByTestId('studio-url');
    /** The remote page at `address` has loaded (its load event): what the next action needs is there. */
    const loaded = (address: string) => page.locator('[data-testid="studio-url"][data-state="complete"]', { hasText: address }).waitFor();
    await list.getByText(`${site.url}/`).waitFor();
    await loaded(`${site.url}/`);
    const canvas = page.getByLabel('Remote browser');
    await canvas.scrollIntoViewIfNeeded();
    const geometry = async () => {
      const b = (await canvas.boundingBox())!;
      return { b, scale: b.width / Number(await canvas.getAttribute('width')) };
    };
    const to = async (p: { x: number; y: number }) => {
      const { b, scale } = await geometry();
      return { x: b.x + p.x * scale, y: b.y + p.y * scale };
    };
    const clickAt = async (p: { x: number; y: number }) => {
      const q = await to(p);
      await page.mouse.click(q.x, q.y);
    };
    const rows = list.locator('.op-row');

    // Sign in: typing, the password (a secret slot by itself), a click.
    await clickAt(at(80));
    await page.keyboard.type('ada');
    await clickAt(at(140));
    await page.keyboard.type(PASSWORD);
    await clickAt(at(200));
    await loaded(`${site.url}/search`);
    // Search: a product, Tab to the aisle and pick Bakery by its first letter, Search.
    await clickAt(at(80));
    await page.keyboard.type('pears');
    await page.keyboard.press('Tab');
    await page.keyboard.press('b');
    await clickAt(at(200));
    await loaded(`${site.url}/board?q=pears&aisle=bakery`);
    await rows.nth(6).waitFor();
    // The board: drag Bread onto the basket (HTML5 drag and drop in the remote page).
    const from = await to(at(80));
    const into = await to({ x: 570, y: 150 });
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(into.x, into.y, { steps: 20 });
    await page.mouse.up();
    await list.getByText('test id "basket"').waitFor();
    // The file input: the page's chooser becomes a picker here.
    await clickAt(at(260));
    const picker = page.getByRole('dialog', { name: 'The page asks for a file' });
    await picker.waitFor();
    // The whole browser card: the remote page, and the picker under it.
    await shot(page.locator('.studio-card'), '01-studio-file-chooser.png');
    await page.getByLabel('File for the page').setInputFiles({ name: 'receipt.csv', mimeType: 'text/csv', buffer: RECEIPT });
    await list.getByText('receipt.csv').waitFor();
    await picker.waitFor({ state: 'detached' });
    await shot(page, '02-studio-recording.png');
    await clickAt(at(320));
    await loaded(`${site.url}/result`);
    // Extract: name the output field, pick the order summary.
    await page.getByLabel('Output field').fill('order');
    await page.getByRole('button', { name: 'Extract' }).click();
    await page.getByRole('button', { name: 'Click the element for "order"' }).waitFor();
    await clickAt({ x: 120, y: 96 });
    await list.getByText('output.order').waitFor();

    const captured = (await ownerCall(page, 'GET', `/api/authoring/${id}`)).session;
    expect(captured.captured_ops.map((o: any) => o.kind)).toEqual([
      'navigate',
      'fill',
      'fill',
      'click',
      'fill',
      'select',
      'click',
      'drag',
      'upload',
      'click',
      'extract',
    ]);
    const [, user, pass, signIn, product, aisle, search, drag, upload, checkout, extract] = captured.captured_ops;
    const primary = (t: any) => {
      const { fallbacks: _f, ...p } = t;
      return p;
    };
    expect([primary(user.target), user.value]).toEqual([{ role: 'textbox', name: 'Username' }, 'ada']);
    expect(pass).toEqual({ kind: 'fill', target: expect.objectContaining({ label: 'Password' }), slot: 'password' });
    expect(primary(signIn.target)).toEqual({ role: 'button', name: 'Sign in' });
    expect([primary(product.target), product.value]).toEqual([{ role: 'textbox', name: 'Product' }, 'pears']);
    expect([primary(aisle.target), aisle.value]).toEqual([{ role: 'combobox', name: 'Aisle' }, 'bakery']);
    expect(primary(search.target)).toEqual({ role: 'button', name: 'Search' });
    expect([primary(drag.source), primary(drag.target)]).toEqual([{ text: 'Bread' }, { testid: 'basket' }]);
    expect([primary(upload.target), upload.files]).toEqual([{ label: 'Receipt' }, 'receipt.csv']);
    expect(primary(checkout.target)).toEqual({ role: 'button', name: 'Check out' });
    expect(extract.name).toBe('order');
    expect(captured.secret_slots).toEqual(['password']);
    expect(captured.files).toEqual([{ name: 'receipt.csv', digest: expect.stringMatching(/^sha256:/), size: RECEIPT.length }]);
    // The remote page really got the drop and the file.
    expect(await url.textContent()).toBe(`${site.url}/result?q=pears&aisle=bakery&basket=Bread&receipt=receipt.csv+%283+lines%29`);

    // The product becomes an input slot; the password is a secret slot already.
    expect(await page.getByLabel('Value of step 3').inputValue()).toBe('secret');
    await page.getByLabel('Value of step 5').selectOption('input');
    await page.getByLabel('Slot of step 5').waitFor();
    await expect.poll(async () => (await ownerCall(page, 'GET', `/api/authoring/${id}`)).session.input_slots, { timeout: 60_000 }).toEqual(['product']);
    await list.scrollIntoViewIfNeeded();
    await shot(page, '03-studio-steps.png');
    await page.getByRole('button', { name: 'Stop recording' }).click();
    await page.getByText('Recording stopped').waitFor();

    // Publish from the studio.
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Published: version').waitFor();
    const automation = (await ownerCall(page, 'GET', `/api/automations/${id}`)).automation;
    expect(automation.status).toBe('published');
    const digest = automation.live_digest as string;

    // The org secret the password slot reads, set on the automation's Secrets tab.
    await page.goto(`/automations/${id}/secrets`);
    await page.getByRole('button', { name: 'Set it' }).click();
    await page.getByLabel('Value').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByText('set', { exact: true }).waitFor();
    // A live key, minted on its API keys tab.
    await page.goto(`/automations/${id}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('minted-secret').textContent())!.trim();

    // The gateway, with a new product: the new output.
    const res = await fetch(`${h.url}/v1/run/grocery-order`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { product: 'apples' } }),
    });
    const result = (await res.json()) as any;
    expect([res.status, result.status, result.error]).toEqual([200, 'succeeded', undefined]);
    expect(result.flow_digest).toBe(digest);
    expect(result.output).toEqual({ order: 'Order for ada: apples from bakery; basket Bread; receipt receipt.csv (3 lines)' });

    await page.goto(`/automations/${id}`);
    await page.getByText('Calls (7 d)').waitFor();
    await page.getByRole('heading', { name: 'grocery-order' }).waitFor();
    await shot(page, '04-automation.png');

    // The inspector: the run from the automation's executions, every step succeeded.
    await page.goto(`/automations/${id}/executions`);
    await page.getByRole('link', { name: /^Run / }).first().click();
    await page.waitForURL('**/runs/*');
    const steps = ['navigate_1', 'fill_2', 'fill_3', 'click_4', 'fill_5', 'select_6', 'click_7', 'drag_8', 'upload_9', 'click_10', 'extract_11'];
    for (const step of steps) await page.locator(`li[data-step="${step}"]`).waitFor();
    expect(await page.locator('li[data-step]').evaluateAll((els) => els.map((e) => e.getAttribute('data-step')))).toEqual(steps);
    expect(await page.locator('li[data-step].tl-succeeded').count()).toBe(steps.length);
    await page.getByText('Order for ada: apples from bakery').first().waitFor({ state: 'attached' });
    await shot(page, '05-inspector.png');
    await shot(page, '05-inspector-full.png', { fullPage: true });
    await context.close();

    // The same captured ops (the upload's file included) through the CLI in a fresh project: the same digest.
    const session = (await h.storage.authoring.get(automation.org_id, id))!;
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-studio-acceptance-'));
    try {
      await run(process.execPath, [CLI, 'init'], { cwd: dir });
      await writeFile(join(dir, 'ops.json'), JSON.stringify(session.captured_ops));
      await writeFile(join(dir, 'receipt.csv'), RECEIPT);
      const flags = [...session.input_slots.flatMap((s) => ['--input', s]), ...session.secret_slots.flatMap((s) => ['--secret', s])];
      expect(flags).toEqual(['--input', 'product', '--secret', 'password']);
      await run(process.execPath, [CLI, 'record', '--name', 'grocery-order', '--task', TASK, '--ops', 'ops.json', ...flags], { cwd: dir });
      const out = await run(process.execPath, [CLI, 'compile', 'grocery-order', '--check'], { cwd: dir });
      expect(/sha256:[0-9a-f]{64}/.exec(out.stdout + out.stderr)?.[0]).toBe(digest);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

/** A call with the page's own session cookie (what the web app would send). */
async function ownerCall(page: Page, method: string, path: string): Promise<any> {
  const res = await page.request.fetch(path, { method });
  expect(res.status()).toBe(200);
  return res.json();
}
