import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * Issue 26, point 9, in the built web app in real Chromium (docs/hosted-api.md, "Studio (live
 * capture)" and "Web app"): a site the egress rule refuses is not opened by the studio, which says so
 * and names SVC_EGRESS_ALLOW (never "recording", no navigate step); a typed address it refuses is not
 * captured either; a draft's FlowSpec tab says it is not published; a degraded automation says so.
 * The studio's egress guard allows one loopback site (the "allowed" server) and refuses the other.
 * Screenshots at 390 and 1280 px go to test-artifacts/web-rules/ (gitignored).
 */

const SHOTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts', 'web-rules');
const WIDTHS = [390, 1280] as const;

let h: HostedFixture;
let owner: Client;
let browser: Browser;
let allowed: { server: Server; url: string };
let refused: { server: Server; url: string };

async function serve(title: string) {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>${title}</title><h1>${title}</h1><button>Go</button>`),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  allowed = await serve('Allowed');
  refused = await serve('Refused');
  // Only the allowed site's origin is on the egress allowlist (SVC_EGRESS_ALLOW); the other is refused.
  h = await startHosted({ egressAllow: [new URL(allowed.url).host] });
  owner = new Client(h.url);
  await owner.signup('web-rules@example.test');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
  for (const s of [allowed, refused]) await new Promise<void>((r) => (s?.server ? s.server.close(() => r()) : r()));
});

async function pageAt(width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: h.url });
  context.setDefaultTimeout(60_000);
  await context.addCookies([{ name: 'svc_session', value: owner.cookie!, url: h.url }]);
  return context.newPage();
}

const shot = (page: Page, name: string, width: number) => page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });

describe('the studio on a site the egress rule refuses', () => {
  it('shows the refusal naming SVC_EGRESS_ALLOW, never "recording", and captures no step', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'refused-site', site: `${refused.url}/`, task: 'Open a private site' })).body.automation;
    for (const width of WIDTHS) {
      const page = await pageAt(width);
      await page.goto(`/automations/${a.id}/capture`);
      await page.getByRole('button', { name: 'Start recording' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'SVC_EGRESS_ALLOW' });
      await alert.waitFor();
      const text = (await alert.textContent())!;
      expect(text).toContain('The studio may not open this site');
      expect(text).toContain(new URL(refused.url).host);
      expect(text).toContain('loopback');
      expect(await page.locator('.studio-card .badge').first().textContent()).toBe('site refused');
      expect(await page.getByText('recording', { exact: true }).count()).toBe(0);
      await page.getByText('Nothing captured yet').waitFor();
      await shot(page, 'studio-refused-site', width);
      await page.context().close();
    }
    // No navigate step (nor any other) was stored.
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops).toEqual([]);
  });

  it('a typed address the rule refuses is said and not captured; the allowed site records', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'allowed-site', site: `${allowed.url}/`, task: 'Open an allowed site' })).body.automation;
    const page = await pageAt(1280);
    await page.goto(`/automations/${a.id}/capture`);
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.locator('[data-testid="studio-url"][data-state="complete"]', { hasText: allowed.url }).waitFor();
    expect(await page.locator('.studio-card .badge').first().textContent()).toBe('recording');
    await page.getByLabel('Address').fill(`${refused.url}/elsewhere`);
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await page.locator('.studio-notices').getByText('SVC_EGRESS_ALLOW').waitFor();
    await shot(page, 'studio-refused-address', 1280);
    await page.getByRole('button', { name: 'Stop recording' }).click();
    await page.context().close();
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops).toEqual([{ kind: 'navigate', url: `${allowed.url}/` }]);
  });
});

describe('automation pages', () => {
  it("a draft's FlowSpec tab says it is not published (no endless spinner)", async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'a-draft', site: `${allowed.url}/`, task: 'Not yet' })).body.automation;
    for (const width of WIDTHS) {
      const page = await pageAt(width);
      await page.goto(`/automations/${a.id}/flowspec`);
      await page.getByText('Not published yet').waitFor();
      expect(await page.getByText('Loading the FlowSpec').count()).toBe(0);
      await shot(page, 'flowspec-draft', width);
      await page.context().close();
    }
  });

  it('a degraded automation shows the notice with the step and its Re-record link', async () => {
    const ex = (await owner.call('POST', '/api/automations/example')).body.automation;
    // The state a run through a fallback leaves (hosted-site-status.test.ts drives it with real runs).
    await h.storage.automations.update(ex.org_id, ex.id, { status: 'published', needs_attention: true, failing_step: 'click_3' });
    for (const width of WIDTHS) {
      const page = await pageAt(width);
      await page.goto(`/automations/${ex.id}/overview`);
      const notice = page.getByTestId('degraded-notice');
      await notice.waitFor();
      expect(await notice.textContent()).toContain('click_3');
      expect(await page.getByRole('link', { name: 'Re-record step click_3' }).count()).toBe(1);
      await shot(page, 'automation-degraded', width);
      await page.context().close();
    }
  });
});
