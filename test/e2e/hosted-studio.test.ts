import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { refused, Viewer } from '../helpers/live-socket.js';
import { at, PASSWORD, studioOrgsOfFile } from '../helpers/studio-demo-site.js';

/**
 * The studio's live capture end to end: the hosted service on 127.0.0.1 (PGlite in memory) with a
 * real Chromium studio browser, a multi-page demo site served by this test, and the test as the
 * viewer on the WebSocket: it waits for frames, clicks and types at known page coordinates, arms
 * extract mode, and checks the ops the capture script computed (primary locators by page: labels,
 * test ids, ARIA roles, CSS only). Then it publishes the capture and runs it through the gateway with
 * a new input. The WebSocket's refusals (foreign or missing Origin, no cookie, a member, another
 * org's automation, a published session) are HTTP answers with no upgrade. The site is
 * test/helpers/studio-demo-site.ts; drags, uploads and locators are hosted-studio-capture.test.ts,
 * keepalive and limits hosted-studio-limits.test.ts.
 */

const orgs = studioOrgsOfFile();
const origin = () => orgs().h.url;

describe('the studio WebSocket refuses before upgrading', () => {
  it('foreign or missing Origin, no cookie, a member, another org, a published session, a plain GET', async () => {
    const { site, owner, member, other, wsBase } = orgs();
    const a = (await owner.call('POST', '/api/automations', { name: 'guarded', site: site.url, task: 'x' })).body.automation;
    const url = `${wsBase}/api/authoring/${a.id}/live`;
    const cookie = `svc_session=${owner.cookie}`;

    const foreign = await refused(url, { cookie, origin: 'https://evil.example' });
    expect([foreign.status, foreign.body.error]).toEqual([403, 'forbidden']);
    const missing = await refused(url, { cookie });
    expect([missing.status, missing.body.error]).toEqual([403, 'forbidden']);
    const anonymous = await refused(url, { origin: origin() });
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthenticated']);
    const tampered = await refused(url, { origin: origin(), cookie: `${cookie}x` });
    expect(tampered.status).toBe(401);
    const asMember = await refused(url, { origin: origin(), cookie: `svc_session=${member.cookie}` });
    expect([asMember.status, asMember.body.error]).toEqual([403, 'forbidden']);
    const otherOrg = await refused(url, { origin: origin(), cookie: `svc_session=${other.cookie}` });
    expect([otherOrg.status, otherOrg.body.error]).toEqual([404, 'not_found']);
    const unknown = await refused(`${wsBase}/api/authoring/nope/live`, { origin: origin(), cookie });
    expect(unknown.status).toBe(404);
    const elsewhere = await refused(`${wsBase}/api/automations`, { origin: origin(), cookie });
    expect(elsewhere.status).toBe(404);

    // A published session is not editable: 409 until it is reopened.
    await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: [{ kind: 'navigate', url: site.url }] });
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const published = await refused(url, { origin: origin(), cookie });
    expect([published.status, published.body.error]).toEqual([409, 'not_editable']);

    const plain = await owner.call('GET', `/api/authoring/${a.id}/live`);
    expect([plain.status, plain.body.error]).toEqual([426, 'upgrade_required']);
  });

  it('caps live sessions per org: the third is refused 429 while two are open', async () => {
    const { site, owner, wsBase } = orgs();
    const a = (await owner.call('POST', '/api/automations', { name: 'capped', site: `${site.url}/`, task: 'x' })).body.automation;
    const url = `${wsBase}/api/authoring/${a.id}/live?width=640&height=480`;
    const headers = { origin: origin(), cookie: `svc_session=${owner.cookie}` };
    // Three malformed handshakes (no Sec-WebSocket-Key) pass the checks, get ws's 400 and hold no place.
    for (let i = 0; i < 3; i++) {
      const u = new URL(url);
      const raw = connect(Number(u.port), u.hostname);
      raw.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nOrigin: ${headers.origin}\r\nCookie: ${headers.cookie}\r\n\r\n`,
      );
      let answer = '';
      raw.on('data', (c) => (answer += c));
      await new Promise((r) => raw.once('close', r));
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
    }
    const one = await Viewer.open(url, headers);
    const two = await Viewer.open(url, headers);
    await Promise.all([one.next((m) => m.type === 'ready'), two.next((m) => m.type === 'ready')]);
    const third = await refused(url, headers);
    expect([third.status, third.body.error]).toEqual([429, 'rate_limited']);
    one.close();
    two.close();
  });
});

describe('capturing a demonstration in real Chromium', () => {
  it('click, type, select and extract become ops with ranked locators; the password is a secret slot; publish and run', async () => {
    const { h, site, owner, wsBase } = orgs();
    const a = (await owner.call('POST', '/api/automations', { name: 'demo-shop', site: `${site.url}/`, task: 'Sign in, find a product and read the summary' }))
      .body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    const ready = await viewer.next((m) => m.type === 'ready');
    expect(ready.viewport).toEqual({ width: 800, height: 600 });
    const frame = await viewer.next((m) => m.type === 'frame');
    expect([frame.width, frame.height]).toEqual([800, 600]);
    expect(Buffer.from(frame.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    await viewer.loaded('/');

    // Labels page: a username (textbox: role first), the password (no role: its label), the button.
    viewer.click(at(40));
    viewer.send({ type: 'text', text: 'ada' });
    viewer.click(at(100));
    viewer.send({ type: 'text', text: PASSWORD });
    viewer.click(at(160));
    await viewer.loaded('/search');
    // Test ids: type a product, Tab to the select and pick "Large" by typing, then Find.
    viewer.click(at(40));
    viewer.send({ type: 'text', text: 'Blue lamp' });
    viewer.send({ type: 'key', action: 'down', key: 'Tab' });
    viewer.send({ type: 'key', action: 'up', key: 'Tab' });
    viewer.send({ type: 'key', action: 'down', key: 'l' });
    viewer.send({ type: 'key', action: 'up', key: 'l' });
    viewer.click(at(160));
    await viewer.loaded('/confirm');
    // ARIA roles: tick the checkbox, continue.
    viewer.click(at(40));
    viewer.click(at(100));
    await viewer.loaded('/result');
    // CSS only: extract the summary.
    viewer.send({ type: 'extract', field: 'summary' });
    await viewer.next((m) => m.type === 'extract_armed');
    viewer.click(at(40));
    const ops = await viewer.opCount(10);

    expect(ops.map((o: any) => o.kind)).toEqual(['navigate', 'fill', 'fill', 'click', 'fill', 'select', 'click', 'click', 'click', 'extract']);
    const primary = (o: any) => {
      const { fallbacks: _f, ...p } = o.target;
      return p;
    };
    const [nav, user, pass, signIn, product, size, find, gift, cont, extract] = ops;
    expect(nav).toEqual({ kind: 'navigate', url: `${site.url}/` });
    expect([user.kind, primary(user), user.value]).toEqual(['fill', { role: 'textbox', name: 'Username' }, 'ada']);
    expect(user.target.fallbacks).toContainEqual({ label: 'Username' });
    expect(pass).toEqual({ kind: 'fill', target: expect.objectContaining({ label: 'Password' }), slot: 'password' });
    expect(primary(pass)).toEqual({ label: 'Password' });
    expect([signIn.kind, primary(signIn)]).toEqual(['click', { role: 'button', name: 'Sign in' }]);
    expect([product.kind, primary(product), product.value]).toEqual(['fill', { testid: 'product' }, 'Blue lamp']);
    expect([size.kind, primary(size), size.value]).toEqual(['select', { testid: 'size' }, 'l']);
    expect([find.kind, primary(find)]).toEqual(['click', { testid: 'find' }]);
    expect([gift.kind, primary(gift)]).toEqual(['click', { role: 'checkbox', name: 'Gift wrap' }]);
    expect([cont.kind, primary(cont)]).toEqual(['click', { role: 'button', name: 'Continue' }]);
    expect([extract.kind, primary(extract), extract.name]).toEqual(['extract', { css: '.summary' }, 'summary']);
    expect(ops).toHaveLength(10);
    viewer.close();

    // Stored through the authoring session; the password is nowhere.
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.captured_ops).toEqual(ops);
    expect(session.secret_slots).toEqual(['password']);
    expect(JSON.stringify(viewer.messages.filter((m) => m.type !== 'frame'))).not.toContain(PASSWORD);

    // Mark the product as an input slot (as the studio page does), publish, run with a new product.
    const withSlot = session.captured_ops.map((o: any, i: number) => (i === 4 ? { ...o, slot: 'product' } : o));
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: withSlot, input_slots: ['product'] })).status).toBe(200);
    const published = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(published.status).toBe(200);
    const spec = (await owner.call('GET', '/api/flowspecs/demo-shop')).body;
    expect(JSON.stringify(spec)).not.toContain(PASSWORD);
    await owner.call('PUT', '/api/secrets/password', { value: PASSWORD });
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const run = await fetch(`${h.url}/v1/run/demo-shop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { product: 'Red chair' } }),
    });
    const result = (await run.json()) as any;
    expect([run.status, result.status]).toEqual([200, 'succeeded']);
    expect(result.output).toEqual({ summary: 'Found Red chair (l) for ada, gift true' });

    // The password is in no row of any table (the org secret is stored sealed), runs and journal included.
    const tables = await h.pglite.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') and table_type = 'BASE TABLE'`,
    );
    expect(tables.rows.map((r) => r.t)).toContain('svc_authoring');
    for (const { s, t } of tables.rows) {
      const dump = await h.pglite.query<{ j: string | null }>(`select string_agg(row_to_json(x)::text, '') as j from "${s}"."${t}" x`);
      expect([t, dump.rows[0]?.j?.includes(PASSWORD) ?? false]).toEqual([t, false]);
    }
  }, 120_000);
});

describe('the studio page of the web app', () => {
  it('records in the browser: frames on the canvas, input relayed, steps listed live, a fill marked as an input slot, a step deleted', async () => {
    const { h, site, owner } = orgs();
    const SHOTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts', 'studio');
    await mkdir(SHOTS, { recursive: true });
    const a = (await owner.call('POST', '/api/automations', { name: 'ui-demo', site: `${site.url}/`, task: 'Sign in' })).body.automation;
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
    try {
      const context = await browser.newContext({ viewport: { width: 1360, height: 1000 }, baseURL: h.url });
      context.setDefaultTimeout(60_000);
      await context.addCookies([{ name: 'svc_session', value: owner.cookie!, url: h.url }]);
      const page = await context.newPage();
      await page.goto(`/automations/${a.id}/capture`);
      await page.getByRole('tab', { name: 'Record in the browser' }).waitFor();
      await page.getByText('Nothing captured yet').waitFor();
      await page.screenshot({ path: join(SHOTS, '01-studio-idle.png'), fullPage: true });
      await page.getByRole('button', { name: 'Start recording' }).click();
      // The first frame hides the overlay; the start URL is the first step.
      await page.locator('.studio-overlay').waitFor({ state: 'detached' });
      const list = page.getByTestId('op-list');
      await list.getByText(`${site.url}/`).waitFor();
      // The remote page is clicked once it has loaded, as a person would wait for it.
      const loaded = (address: string) => page.locator('[data-testid="studio-url"][data-state="complete"]', { hasText: address }).waitFor();
      await loaded(`${site.url}/`);

      // Where the canvas is and how it is scaled, read at every click: a box read once goes stale when
      // the page lays out again (a notice, the step list, a scroll) and the click lands elsewhere.
      const canvas = page.getByLabel('Remote browser');
      const clickAt = async (p: { x: number; y: number }) => {
        const box = (await canvas.boundingBox())!;
        const scale = box.width / Number(await canvas.getAttribute('width'));
        await page.mouse.click(box.x + p.x * scale, box.y + p.y * scale);
      };
      await clickAt(at(40));
      await page.keyboard.type('grace');
      await clickAt(at(160));
      await list.getByText('button "Sign in"').waitFor();
      const row = await list.locator('.op-row').nth(1).textContent();
      expect(row).toContain('textbox "Username"');
      expect(row).toContain('"grace"');
      await loaded(`${site.url}/search`);
      await page.screenshot({ path: join(SHOTS, '02-studio-recording.png'), fullPage: true });

      // The address bar (a navigate step), then Extract: name the field, pick the element.
      await page.getByLabel('Address').fill(`${site.url}/result?q=x&size=s&gift=false`);
      await page.getByRole('button', { name: 'Go', exact: true }).click();
      await list.getByText(`${site.url}/result?q=x&size=s&gift=false`).waitFor();
      await loaded(`${site.url}/result`);
      await page.getByLabel('Output field').fill('summary');
      await page.getByRole('button', { name: 'Extract' }).click();
      await page.getByRole('button', { name: 'Click the element for "summary"' }).waitFor();
      // The summary's text starts at the panel's left edge: pick the text itself, not the panel.
      await clickAt({ x: 60, y: 56 });
      await list.getByText('output.summary').waitFor();
      expect(await list.locator('.op-row').nth(4).locator('code').first().textContent()).toBe('.summary');

      // The typed username becomes an input slot; the session says so.
      await page.getByLabel('Value of step 2').selectOption('input');
      await page.getByLabel('Slot of step 2').waitFor();
      await expect.poll(async () => (await owner.call('GET', `/api/authoring/${a.id}`)).body.session.input_slots, { timeout: 60_000 }).toEqual(['username']);
      // Delete the click: four steps are left.
      await page.getByRole('button', { name: 'Delete step 3' }).click();
      await expect.poll(async () => (await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops.length, { timeout: 60_000 }).toBe(4);
      await page.getByText('Captured steps (4)').waitFor();
      await page.screenshot({ path: join(SHOTS, '03-studio-slots.png'), fullPage: true });
      await page.getByRole('button', { name: 'Stop recording' }).click();
      await page.getByText('Recording stopped').waitFor();
      const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
      expect(session.captured_ops[1]).toMatchObject({ kind: 'fill', slot: 'username', value: 'grace' });
      expect(session.captured_ops.map((o: any) => o.kind)).toEqual(['navigate', 'fill', 'navigate', 'extract']);
      expect(session.captured_ops[3]).toMatchObject({ kind: 'extract', target: { css: '.summary' }, name: 'summary' });

      // Test run before publishing: the capture runs once in a fresh context; nothing goes live.
      await page.getByRole('button', { name: 'Test run' }).click();
      await page.getByTestId('test-result').getByText('Test run succeeded').waitFor();
      expect(await page.getByTestId('test-result').textContent()).toContain('summary');
      expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('draft');
      await page.screenshot({ path: join(SHOTS, '03b-studio-test-run.png'), fullPage: true });

      // Publish from the studio: a version goes live, and recording waits for a reopen.
      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByText('Published: version').waitFor();
      await page.getByText('The capture is published').waitFor();
      expect(await page.getByRole('button', { name: 'Record again' }).isDisabled()).toBe(true);
      await page.screenshot({ path: join(SHOTS, '04-studio-published.png'), fullPage: true });
      const published = (await owner.call('GET', `/api/automations/${a.id}`)).body.automation;
      expect([published.status, published.live_digest]).toEqual(['published', expect.stringMatching(/^sha256:/)]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
