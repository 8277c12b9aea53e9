import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { appHostPage, withCsp } from '../helpers/mcp-app-host.js';

/**
 * Results as an MCP App on the hosted endpoint: tools link `ui://flowctl/run-view.html`
 * (`_meta.ui.resourceUri`), resources/list and resources/read serve it as `text/html;profile=mcp-app`
 * on both protocol eras, and the app, shown by a headless host in Chromium that speaks the ext-apps
 * protocol with the SDK's own AppBridge (test/helpers/mcp-app-host.ts), renders the run's status,
 * step timeline, the stored (masked) screenshot and the output, with no network and no credentials.
 * Screenshots at phone and desktop width go to test-artifacts/mcp-app/ for a person to look at.
 */

const SHOTS = resolve(import.meta.dirname, '../../test-artifacts/mcp-app');
const CANARY = 'canary-secret-7f3a';
const REFUSED = 'http://127.0.0.1:1/';
type Result = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, any> };

let h: HostedFixture;
let owner: Client;
let key: string;
let browser: Browser;
let hostHtml: string;
let client: V2Client;

async function publish(name: string, site: string, ops: unknown[], slots: { secret_slots?: string[] } = {}) {
  const a = (await owner.call('POST', '/api/automations', { name, site, task: `Task of ${name}` })).body.automation;
  await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, ...slots });
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
}

/** Show `result` in the app inside the test host at `width`; answers the app's frame. */
async function show(page: Page, html: string, result: Result, args: Record<string, unknown>, theme: 'light' | 'dark' = 'light'): Promise<FrameLocator> {
  await page.setContent(hostHtml);
  await page.evaluate((o) => (window as any).showApp(o), { html: withCsp(html), result, args, theme });
  const frame = page.frameLocator('iframe');
  await frame.locator('body[data-rendered="true"]').waitFor({ timeout: 60_000 });
  return frame;
}

beforeAll(async () => {
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('mcp-apps@example.test');
  await owner.call('POST', '/api/automations/example'); // example-forecast: input city, output forecast
  expect((await owner.call('PUT', '/api/secrets/home', { value: CANARY })).status).toBeLessThan(300);
  await publish(
    'types-secret',
    `${h.url}/example/site`,
    [
      { kind: 'navigate', url: h.exampleSiteUrl },
      { kind: 'fill', target: { label: 'City' }, slot: 'home' },
      { kind: 'extract', target: 'h1', name: 'title' },
    ],
    { secret_slots: ['home'] },
  );
  await publish('goes-nowhere', REFUSED, [
    { kind: 'navigate', url: REFUSED },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  client = new V2Client({ name: 'hosted-mcp-apps-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new V2Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  hostHtml = await appHostPage();
  await mkdir(SHOTS, { recursive: true });
}, 240_000);
afterAll(async () => {
  await client?.close();
  await browser?.close();
  await h?.close();
});

describe('hosted MCP: results as an MCP App', () => {
  it('tools link the UI resource; resources/list and resources/read serve it on both eras', async () => {
    const tools = (await client.listTools()).tools;
    for (const t of tools) expect([t.name, t._meta?.ui]).toEqual([t.name, { resourceUri: 'ui://flowctl/run-view.html' }]);
    const listed = (await client.listResources()).resources;
    expect(listed).toEqual([expect.objectContaining({ uri: 'ui://flowctl/run-view.html', mimeType: 'text/html;profile=mcp-app' })]);
    const read = await client.readResource({ uri: 'ui://flowctl/run-view.html' });
    const app = read.contents[0] as { uri: string; mimeType: string; text: string };
    expect(app).toMatchObject({ uri: 'ui://flowctl/run-view.html', mimeType: 'text/html;profile=mcp-app' });
    // Self-contained: no script, style, image or frame from anywhere.
    expect(app.text).toMatch(/^<!doctype html>/);
    expect(app.text).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    // The 1.x client at 2025-11-25 reads the same resource; an unknown one is a JSON-RPC error.
    const old = new V1Client({ name: 'hosted-mcp-apps-legacy', version: '1.0.0' });
    await old.connect(new V1Transport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      expect(((await old.readResource({ uri: 'ui://flowctl/run-view.html' })).contents[0] as { text: string }).text).toBe(app.text);
      const missing = (await old.readResource({ uri: 'ui://flowctl/nope.html' }).catch((e: Error) => e)) as Error;
      expect(missing.message).toMatch(/unknown resource/);
    } finally {
      await old.close();
    }
    const missing = (await client.readResource({ uri: 'file:///etc/passwd' }).catch((e: Error) => e)) as Error;
    expect(missing).toBeInstanceOf(Error);
  });

  it('a run with a secret: status, steps, the stored masked screenshot and the output, at phone and desktop width', async () => {
    const html = ((await client.readResource({ uri: 'ui://flowctl/run-view.html' })).contents[0] as { text: string }).text;
    const result = (await client.callTool({ name: 'types-secret', arguments: {} })) as Result;
    expect(result.isError).toBeFalsy();
    const view = result._meta!['flowctl/run_view'];
    expect(view).toMatchObject({ status: 'succeeded', flow: 'types-secret', run_id: result._meta!['flowctl/run_id'] });
    expect(view.steps.map((s: { status: string }) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // The screenshot is the run's stored artifact (masked when taken), byte for byte; never the secret.
    const run = (await owner.call('GET', `/api/executions/${view.run_id}`)).body;
    const digests: string[] = run.journal.filter((e: any) => e.event === 'step_succeeded').flatMap((e: any) => e.artifacts ?? []);
    expect(digests.length).toBeGreaterThan(0);
    const stored = await fetch(`${h.url}/api/executions/${view.run_id}/artifacts/${digests.at(-1)}`, { headers: { cookie: `svc_session=${owner.cookie}` } });
    expect(stored.status).toBe(200);
    expect(view.screenshot.data).toBe(Buffer.from(await stored.arrayBuffer()).toString('base64'));
    expect(JSON.stringify(result)).not.toContain(CANARY);

    for (const [label, width, height, theme] of [
      ['phone', 390, 844, 'light'],
      ['desktop', 1280, 800, 'dark'],
    ] as const) {
      const page = await browser.newPage({ viewport: { width, height } });
      try {
        const requests: string[] = [];
        page.on('request', (r) => {
          if (!r.url().startsWith('data:') && r.url() !== 'about:srcdoc') requests.push(r.url());
        });
        const frame = await show(page, html, result, {}, theme);
        await expect.poll(() => frame.locator('[data-testid=status]').textContent()).toBe('succeeded');
        expect(await frame.locator('h1').textContent()).toBe('types-secret');
        expect(await frame.locator('[data-testid=steps] li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-status')))).toEqual([
          'succeeded',
          'succeeded',
          'succeeded',
        ]);
        expect(await frame.locator('[data-testid=steps]').textContent()).toContain(view.steps[1].id);
        expect(JSON.parse((await frame.locator('[data-testid=output]').textContent())!)).toEqual(result.structuredContent);
        const img = frame.locator('[data-testid=screenshot]');
        await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(100);
        expect(await frame.locator('body').textContent()).not.toContain(CANARY);
        // The host sized the frame to the app (ui/notifications/size-changed).
        expect(await page.evaluate(() => (window as any).hostEvents)).toEqual(expect.arrayContaining(['initialized', 'result-sent', 'size-changed']));
        await expect.poll(() => page.locator('iframe').evaluate((f) => f.getBoundingClientRect().height)).toBeGreaterThan(200);
        // Nothing was fetched from anywhere: the page and the app are inline, the screenshot a data: URL.
        expect(requests).toEqual([]);
        await page.screenshot({ path: join(SHOTS, `run-view-${label}.png`), fullPage: true });
      } finally {
        await page.close();
      }
    }
  }, 240_000);

  it('a failed run: the failing step and its error; a client without MCP Apps gets the plain result', async () => {
    const html = ((await client.readResource({ uri: 'ui://flowctl/run-view.html' })).contents[0] as { text: string }).text;
    const result = (await client.callTool({ name: 'goes-nowhere', arguments: {} })) as Result;
    expect(result.isError).toBe(true);
    const error = JSON.parse(result.content[0]!.text!).error;
    const page = await browser.newPage({ viewport: { width: 390, height: 700 } });
    try {
      const frame = await show(page, html, result, {});
      await expect.poll(() => frame.locator('[data-testid=status]').textContent()).toBe('failed');
      expect(await frame.locator('[data-testid=steps] li[data-status=failed]').count()).toBe(1);
      expect(await frame.locator('[data-testid=steps] li[data-status=failed]').textContent()).toContain(error.step);
      expect(await frame.locator('[data-testid=output]').textContent()).toContain(`${error.code} at step ${error.step}`);
      await page.screenshot({ path: join(SHOTS, 'run-view-failed-phone.png'), fullPage: true });
    } finally {
      await page.close();
    }
    // The plain result is the same as before MCP Apps: content and structuredContent untouched.
    expect(result.content).toHaveLength(1);
    expect(result.structuredContent).toBeUndefined();
    expect(Object.keys(result._meta!).sort()).toEqual([
      'flowctl/flow_digest',
      'flowctl/run_id',
      'flowctl/run_view',
      'flowctl/status',
      'io.modelcontextprotocol/serverInfo',
    ]);
  }, 120_000);
});
