import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The web app end to end, as a user drives it in real Chromium: the hosted service on 127.0.0.1 with
 * PGlite in a temp folder serves the built app (dist/web) at `/`. Sign up, create an automation, give
 * it a capture and publish it, mint a key in the UI, run it through the gateway with that key, and see
 * the run in the inspector with every step (a drift warning included), live while it is in flight.
 * Screenshots of each main page go to test-artifacts/web-app/ (gitignored).
 */

const repo = resolve(import.meta.dirname, '../..');
const SHOTS = join(repo, 'test-artifacts', 'web-app');
const shots: string[] = [];

let dir: string;
let h: HostedFixture;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let site: { url: string; server: Server; gate?: { arrived: () => void; release: Promise<void> } };

/** The site the automation works on. `GET /shop` can be held by the test (a run then stays in flight). */
async function startShop() {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<h1>Shop</h1><form id="f"><label for="q">Product</label><input id="q" name="q"><button type="submit">Search</button></form>
<p id="result"></p>
<script>document.getElementById('f').addEventListener('submit',function(e){e.preventDefault();
document.getElementById('result').textContent='Results for '+document.getElementById('q').value;});</script></body></html>`;
  const state: typeof site = { url: '', server: undefined as never };
  state.server = createServer(async (req, res) => {
    if (req.url?.startsWith('/shop')) {
      const gate = state.gate;
      if (gate) {
        state.gate = undefined;
        gate.arrived();
        await gate.release;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

async function shot(name: string) {
  const path = join(SHOTS, `${name}.png`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
  shots.push(path);
}

/** An API call with the page's own session cookie (the browser context's cookie jar). */
async function apiGet(path: string): Promise<any> {
  const res = await context.request.get(`${h.url}${path}`);
  expect([path, res.status()]).toEqual([path, 200]);
  return res.json();
}

/** A link of the sidebar. */
const nav = (name: string) => page.locator('.sidebar').getByRole('link', { name, exact: true });

const gateway = async (key: string, flow: string, inputs: Record<string, unknown>) => {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ inputs }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-web-e2e-'));
  await mkdir(SHOTS, { recursive: true });
  site = await startShop();
  // The default web root: the package's built app (test/global-setup.ts builds it when web/ changed).
  h = await startHosted({ egressAllow: FIXTURE_SITES }, {}, { dataDir: join(dir, 'pgdata') });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  context = await browser.newContext({ viewport: { width: 1360, height: 860 }, baseURL: h.url });
  // Waits end on DOM events; this only ends a hang.
  context.setDefaultTimeout(60_000);
  page = await context.newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
  await rm(dir, { recursive: true, force: true });
  if (shots.length > 0) console.log(`[web-app] screenshots:\n${shots.map((s) => `  ${s}`).join('\n')}`);
});

describe('the web app, driven in Chromium', () => {
  let automationId = '';
  let secret = '';
  let firstRunId = '';

  it('serves the app at / and asks a new visitor to log in; signs up', async () => {
    const res = await page.goto('/');
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    // A wrong password is a readable error, not a crash.
    await page.getByLabel('Email').fill('nobody@example.test');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('Wrong email or password').waitFor();
    await shot('01-login-error');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/signup');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill('a long passphrase');
    await page.getByLabel('Organization name').fill('Analytical Engines');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText('No automations yet').waitFor();
    expect(new URL(page.url()).pathname).toBe('/automations');
    expect(await page.getByTestId('user-email').textContent()).toBe('ada@example.test');
    await shot('02-automations-empty');
  });

  it('creates an automation, gives it a capture and publishes it', async () => {
    await page.getByRole('link', { name: 'New automation' }).first().click();
    await page.getByLabel('Name').fill('shop-search');
    await page.getByLabel('Site').fill(site.url);
    await page.getByLabel('Task').fill('Search the shop for a product and read the result');
    await shot('03-new-automation');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL(/\/automations\/[^/]+\/capture$/);
    automationId = new URL(page.url()).pathname.split('/')[2]!;

    // A duplicate name is refused with the service's structured error (name_taken).
    const dup = await context.newPage();
    await dup.goto('/automations/new');
    await dup.getByLabel('Name').fill('shop-search');
    await dup.getByLabel('Site').fill(site.url);
    await dup.getByRole('button', { name: 'Create draft' }).click();
    await dup.getByText('That name is taken').waitFor();
    expect(await dup.getByRole('alert').textContent()).toContain('name_taken');
    await dup.close();

    // The fill's primary locator is not on the page: the fallback matches, with a drift warning.
    const ops = [
      { kind: 'navigate', url: `${site.url}/shop` },
      { kind: 'fill', target: { label: 'Search the shop', fallbacks: [{ css: '#q' }] }, value: 'apples', slot: 'query' },
      { kind: 'click', target: { role: 'button', name: 'Search' } },
      { kind: 'extract', target: '#result', name: 'result' },
    ];
    // The Capture tab opens on "Record in the browser" for an owner; this test types the ops as JSON.
    await page.getByRole('tab', { name: 'Edit as JSON' }).click();
    await page.getByLabel('Operations (JSON array)').fill(JSON.stringify(ops, null, 2));
    await page.getByLabel('Input slots').fill('query');
    await page.getByRole('button', { name: 'Save capture' }).click();
    await page.getByRole('button', { name: 'Publish' }).and(page.locator(':enabled')).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Published: version').waitFor();
    await page.getByRole('button', { name: 'Reopen for editing' }).waitFor();
    await shot('04-capture-published');

    const a = (await apiGet(`/api/automations/${automationId}`)).automation;
    expect(a).toMatchObject({ name: 'shop-search', status: 'published', live_digest: expect.stringMatching(/^sha256:/) });

    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByText('Published versions').waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    expect(await page.locator('table tbody tr').first().textContent()).toContain('live');
    await shot('05-versions');

    await page.getByRole('tab', { name: 'FlowSpec' }).click();
    await page.getByText('Live FlowSpec').waitFor();
    for (const step of ['navigate_1', 'fill_2', 'click_3', 'extract_4']) await page.locator('.step-list code', { hasText: step }).waitFor();
    expect(await page.locator('.card-subtitle code').textContent()).toBe(a.live_digest);
    await shot('06-flowspec');
  });

  it('mints a key in the UI (the secret shown once) and runs the automation through the gateway with it', async () => {
    await page.getByRole('tab', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    secret = (await page.getByTestId('minted-secret').textContent())!;
    expect(secret).toMatch(/^svc_live_[0-9A-Za-z]{36}$/);
    await page.locator('table tbody tr', { hasText: 'ci' }).waitFor();
    expect(await page.locator('table').textContent()).not.toContain(secret);
    await shot('07-key-created');

    const run = await gateway(secret, 'shop-search', { query: 'pears' });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: 'succeeded', output: { result: 'Results for pears' } });
    firstRunId = run.body.run_id;
  });

  it('shows the run in the inspector with every step, the drift warning and the output', async () => {
    await nav('Runs').click();
    const row = page.locator('[data-testid=executions] tbody tr').first();
    await row.waitFor();
    expect(await row.textContent()).toContain('shop-search');
    expect(await row.textContent()).toContain('succeeded');
    await shot('08-runs');
    await row.click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const refId = new URL(page.url()).pathname.split('/')[2]!;
    const { execution, journal } = await apiGet(`/api/executions/${refId}`);
    expect(execution.run_id).toBe(firstRunId);

    const spec = await apiGet('/api/flowspecs/shop-search');
    await page.locator('[data-testid=timeline]').waitFor();
    const steps = spec.steps.map((s: { id: string }) => s.id);
    expect(steps).toEqual(['navigate_1', 'fill_2', 'click_3', 'extract_4']);
    for (const id of steps) {
      const item = page.locator(`[data-step="${id}"]`);
      expect([id, await item.getAttribute('class')]).toEqual([id, expect.stringContaining('tl-succeeded')]);
      // The step's time in the journal, as the timeline shows it.
      const started = Date.parse(journal.find((e: any) => e.event === 'step_started' && e.step === id).at);
      const ended = Date.parse(journal.find((e: any) => e.event === 'step_succeeded' && e.step === id).at);
      const ms = ended - started;
      expect([id, await item.locator('.tl-time').textContent()]).toEqual([id, ms < 1000 ? `${ms} ms` : expect.stringMatching(/^\d+\.\d+ s$/)]);
    }
    const drift = page.locator('[data-step="fill_2"] .warning-box');
    expect(await drift.textContent()).toContain('Locator drift');
    expect(await drift.textContent()).toContain('#q');
    expect(await page.locator('.card', { hasText: 'Output' }).first().textContent()).toContain('Results for pears');
    await shot('09-run');
  });

  it('follows a run in flight through the SSE stream, without a reload', async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    let release!: () => void;
    site.gate = { arrived, release: new Promise<void>((r) => (release = r)) };
    const pending = gateway(secret, 'shop-search', { query: 'plums' });
    await reached; // the run is in its navigate step, held by the site

    await nav('Runs').click();
    const row = page.locator('[data-testid=executions] tbody tr', { hasText: 'running' }).first();
    await row.click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.locator('[data-testid=live-badge][data-state=live]').waitFor();
    await page.locator('[data-step="navigate_1"].tl-running').waitFor();
    await page.evaluate(() => ((window as any).__noReload = true));
    await shot('10-run-live');

    release();
    expect((await pending).body.status).toBe('succeeded');
    await page.locator('[data-step="extract_4"].tl-succeeded').waitFor();
    await page.locator('.tl-item', { hasText: 'run finished' }).waitFor();
    await page.locator('.card', { hasText: 'Results for plums' }).first().waitFor();
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await page.locator('[data-testid=live-badge]').waitFor({ state: 'detached' });
  });

  it('a failing run: the failing step and its error; the automation is marked failing', async () => {
    // Seeded through the API (the same routes the Capture tab uses): a target that is not on the page.
    const post = (path: string, data?: unknown) =>
      context.request.fetch(`${h.url}${path}`, { method: 'POST', data, headers: data === undefined ? {} : { 'content-type': 'application/json' } });
    const created = await (await post('/api/automations', { name: 'shop-broken', site: site.url, task: 'Read a result that is not there' })).json();
    const id = created.automation.id;
    const patched = await context.request.fetch(`${h.url}/api/authoring/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      data: {
        captured_ops: [
          { kind: 'navigate', url: `${site.url}/shop` },
          { kind: 'extract', target: '#gone', name: 'result' },
        ],
      },
    });
    expect(patched.status()).toBe(200);
    expect((await post(`/api/authoring/${id}/publish`)).status()).toBe(200);
    // The UI's key is scoped to shop-search (minted from its page): this one reaches every automation.
    const unscoped = (await (await post('/api/keys', { mode: 'live' })).json()).secret;
    expect((await gateway(secret, 'shop-broken', {})).status).toBe(404);
    const failed = await gateway(unscoped, 'shop-broken', {});
    expect(failed.body).toMatchObject({ status: 'failed', error: { step: 'extract_2', code: 'locator_drift' } });

    // The list pages by cursor (two a page here) and filters by automation.
    await page.goto('/runs?limit=2');
    const rows = page.locator('[data-testid=executions] tbody tr');
    await page.getByRole('button', { name: 'Older runs' }).waitFor();
    expect(await rows.count()).toBe(2);
    await page.getByRole('button', { name: 'Older runs' }).click();
    await rows.nth(2).waitFor();
    await page.getByRole('button', { name: 'Older runs' }).waitFor({ state: 'detached' });
    expect(await rows.allTextContents()).toEqual([
      expect.stringContaining('shop-broken'),
      expect.stringContaining('shop-search'),
      expect.stringContaining('shop-search'),
    ]);
    await page.getByLabel('Filter by automation').selectOption('shop-broken');
    await page.waitForURL(/flow=shop-broken/);
    // The filtered page replaces the list: wait until the table holds one row.
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=executions] tbody tr').length === 1);
    expect(await rows.allTextContents()).toEqual([expect.stringContaining('shop-broken')]);
    await rows.first().click();
    await page.locator('.run-failure', { hasText: 'Failed at step extract_2' }).waitFor();
    expect(await page.locator('.run-failure').textContent()).toContain('locator_drift');
    expect(await page.locator('[data-step="extract_2"]').getAttribute('class')).toContain('tl-failed');
    expect(await page.locator('[data-step="navigate_1"]').getAttribute('class')).toContain('tl-succeeded');
    await shot('11-run-failed');

    await nav('Automations').click();
    const broken = page.locator('tbody tr', { hasText: 'shop-broken' });
    await broken.waitFor();
    expect(await broken.textContent()).toContain('failing');
    expect(await broken.textContent()).toContain('needs attention');
    const good = page.locator('tbody tr', { hasText: 'shop-search' });
    expect(await good.textContent()).toContain('published');
    expect(await good.locator('td.num').textContent()).toBe('2');
    await shot('12-automations');
  });

  it('reopens the capture, publishes a second version and rolls back to the first', async () => {
    const first = (await apiGet(`/api/automations/${automationId}`)).automation.live_digest;
    await page.goto(`/automations/${automationId}/capture`);
    await page.getByRole('tab', { name: 'Edit as JSON' }).click();
    await page.getByRole('button', { name: 'Reopen for editing' }).click();
    await page.getByRole('button', { name: 'Save capture' }).waitFor();
    const ops = JSON.parse(await page.getByLabel('Operations (JSON array)').inputValue());
    ops[1].value = 'kiwis';
    await page.getByLabel('Operations (JSON array)').fill(JSON.stringify(ops, null, 2));
    await page.getByRole('button', { name: 'Save capture' }).click();
    await page.getByRole('button', { name: 'Publish' }).and(page.locator(':enabled')).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Published: version').waitFor();
    const second = (await apiGet(`/api/automations/${automationId}`)).automation.live_digest;
    expect(second).not.toBe(first);

    await page.getByRole('tab', { name: 'Versions' }).click();
    const rows = page.locator('table tbody tr');
    await rows.nth(1).waitFor();
    expect(await rows.nth(0).textContent()).toContain('live');
    await rows.nth(1).getByRole('button', { name: 'Roll back to this' }).click();
    await rows.nth(1).getByRole('button', { name: 'Yes' }).click();
    await rows.nth(1).locator('.badge', { hasText: 'live' }).waitFor();
    expect(await rows.nth(0).textContent()).not.toContain('live');
    expect((await apiGet(`/api/automations/${automationId}`)).automation.live_digest).toBe(first);
    await shot('13-versions-rolled-back');
  });

  it('schedules: create, disable, delete', async () => {
    await page.goto(`/automations/${automationId}/schedules`);
    await page.getByLabel('Cron').fill('0 7 * * 1-5');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByLabel('Inputs (JSON object)').fill('{"query":"figs"}');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const row = page.locator('tbody tr', { hasText: '0 7 * * 1-5' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Europe/Berlin');
    // A cron finer than the minimum interval is refused with its issue shown.
    await page.getByLabel('Cron').fill('* * * * * *');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByText('Some fields are not valid').waitFor();
    await shot('14-schedules');
    await row.getByRole('checkbox').click();
    await row.locator('.switch', { hasText: 'off' }).waitFor();
    expect((await apiGet(`/api/automations/${automationId}/schedules`)).schedules[0].enabled).toBe(false);
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes' }).click();
    await page.getByText('No schedules').waitFor();
  });

  it('secrets, members and the audit log', async () => {
    await nav('Secrets').click();
    await page.getByLabel('Name', { exact: true }).fill('password');
    await page.getByLabel('Value').fill('s3cret value never shown');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.locator('tbody tr', { hasText: 'password' }).waitFor();
    expect(await page.content()).not.toContain('s3cret value never shown');
    await shot('15-secrets');

    await nav('Members').click();
    await page.locator('tbody tr', { hasText: 'ada@example.test' }).waitFor();
    await page.getByLabel('Email').fill('nobody@example.test');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByText('No account with that email').waitFor();
    await shot('16-members');

    await nav('Audit log').click();
    await page.locator('tbody tr').first().waitFor();
    const text = await page.locator('table').textContent();
    for (const action of [
      'org.create',
      'automation.create',
      'automation.publish',
      'automation.edit',
      'automation.rollback',
      'key.mint',
      'schedule.create',
      'schedule.delete',
      'secret.create',
    ])
      expect([action, text!.includes(action)]).toEqual([action, true]);
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByText('The chain verifies').waitFor();
    await shot('17-audit');
  });

  it('creates and switches organizations; logs out and back in', async () => {
    await page.getByRole('link', { name: '+ New organization' }).click();
    await page.getByLabel('Name').fill('Second org');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('No automations yet').waitFor();
    expect(await page.locator('#org-select option:checked').textContent()).toContain('Second org');

    const first = (await apiGet('/api/session')).orgs.find((o: any) => o.name === 'Analytical Engines').id;
    await page.locator('#org-select').selectOption(first);
    await page.locator('tbody tr', { hasText: 'shop-search' }).waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect((await context.request.get(`${h.url}/api/automations`)).status()).toBe(401);
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill('a long passphrase');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Automations' }).waitFor();

    // A deep link while signed in, and a client route the app does not know.
    await page.goto(`/automations/${automationId}/overview`);
    await page.getByText('POST /v1/run/shop-search').first().waitFor();
    await shot('18-automation-overview');
    await page.goto('/no/such/page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  });
});
