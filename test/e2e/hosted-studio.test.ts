import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused, Viewer } from '../helpers/live-socket.js';
import { createStudioBrowser, LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import type { StudioBrowser } from '../../src/ports/studio.js';
import { createEgressGuard } from '../../src/tools/egress.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The studio's live capture end to end: the hosted service on 127.0.0.1 (PGlite in memory) with a
 * real Chromium studio browser, a multi-page demo site served by this test, and the test as the
 * viewer on the WebSocket: it waits for frames, clicks and types at known page coordinates, arms
 * extract mode, and checks the ops the capture script computed (primary locators by page: labels,
 * test ids, ARIA roles, CSS only). Then it publishes the capture and runs it through the gateway with
 * a new input. The WebSocket's refusals (foreign or missing Origin, no cookie, a member, another
 * org's automation, a published session) are HTTP answers with no upgrade.
 */

const PASSWORD = 'demo-pass-7Q';

/** Every element the test touches sits at a fixed place: left 40, width 300, height 32, at `top`. */
const box = (top: number) => `style="position:absolute;left:40px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
const at = (top: number) => ({ x: 190, y: top + 16 });

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0;font:16px sans-serif">${body}</body></html>`;
}

/** The drift page's variant: as recorded, its test ids and ids renamed, or the Send button removed. */
let driftVariant: 'base' | 'renamed' | 'removed' = 'base';

async function startDemoSite() {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (text: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    const signedIn = /(?:^|;\s*)who=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (url.pathname === '/' && req.method === 'GET') {
      // Labels: a textbox (role + name first), a password field (no role: its label), a button.
      return html(
        page(
          'Sign in',
          `<form method="post" action="/login">
<label for="u" style="position:absolute;left:360px;top:40px">Username</label><input id="u" name="user" autocomplete="off" ${box(40)}>
<label for="p" style="position:absolute;left:360px;top:100px">Password</label><input id="p" type="password" name="password" ${box(100)}>
<button type="submit" ${box(160)}>Sign in</button></form>`,
        ),
      );
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const ok = form.get('password') === PASSWORD && (form.get('user') ?? '') !== '';
        res.writeHead(303, { location: '/search', ...(ok ? { 'set-cookie': `who=${encodeURIComponent(form.get('user')!)}; Path=/` } : {}) }).end();
      });
      return;
    }
    if (url.pathname === '/search') {
      // Test ids.
      return html(
        page(
          'Search',
          `<input data-testid="product" ${box(40)}>
<select data-testid="size" ${box(100)}><option value="s">Small</option><option value="m">Medium</option><option value="l">Large</option></select>
<button data-testid="find" ${box(160)} onclick="location.href='/confirm?q='+encodeURIComponent(document.querySelector('[data-testid=product]').value)+'&size='+document.querySelector('[data-testid=size]').value">Find</button>`,
        ),
      );
    }
    if (url.pathname === '/confirm') {
      // ARIA roles on plain divs.
      return html(
        page(
          'Confirm',
          `<div role="checkbox" aria-checked="false" aria-label="Gift wrap" tabindex="0" ${box(40)} onclick="this.setAttribute('aria-checked', this.getAttribute('aria-checked')==='true'?'false':'true')">[ ] wrap it</div>
<div role="button" aria-label="Continue" tabindex="0" ${box(100)} onclick="location.href='/result'+location.search+'&gift='+document.querySelector('[role=checkbox]').getAttribute('aria-checked')">&rarr;</div>`,
        ),
      );
    }
    if (url.pathname === '/dupes') {
      // Two buttons named alike (one with a generated id), and a total with a stable id.
      return html(
        page(
          'Dupes',
          `<ul style="margin:0;padding:0;list-style:none"><li class="item"><button id="ember123" ${box(40)}>Delete</button></li><li class="item"><button ${box(100)}>Delete</button></li></ul>
<div id="totals" ${box(160)}>Total 42</div>`,
        ),
      );
    }
    if (url.pathname === '/popup') {
      return html(
        page(
          'Popup',
          `<a href="/" target="_blank" ${box(40)}>Open in a new tab</a><iframe src="/" title="framed" style="position:absolute;left:40px;top:120px;width:400px;height:240px"></iframe>`,
        ),
      );
    }
    if (url.pathname === '/drift') {
      // Every strategy names the field and the button: test id, role + name, label or text, id. The
      // variants rename the test ids and ids (the page's own script follows), or remove the button.
      const v = driftVariant === 'base' ? '' : '-v2';
      const button = driftVariant === 'removed' ? '' : `<button id="send${v}" data-testid="send-button${v}" ${box(100)}>Send</button>`;
      return html(
        page(
          'Drift',
          `<label for="email${v}" style="position:absolute;left:360px;top:40px">Email</label><input id="email${v}" data-testid="email-input${v}" autocomplete="off" ${box(40)}>
${button}<output class="result" ${box(160)}></output>
<script>document.getElementById('send${v}')?.addEventListener('click', () => { document.querySelector('.result').textContent = 'Sent to ' + document.getElementById('email${v}').value; });</script>`,
        ),
      );
    }
    if (url.pathname === '/board') {
      // Drags and an upload: an HTML5 card dropped on a basket, a pointer-dragged chip dropped on a
      // shelf (mousedown/mousemove/mouseup, no HTML5), a file input; Done carries what happened.
      return html(
        page(
          'Board',
          `<div draggable="true" id="pears" ${box(40)}>Pears</div>
<div data-testid="basket" aria-label="Basket" style="position:absolute;left:400px;top:40px;width:300px;height:120px;border:1px solid #999">Basket: <span id="basket-items"></span></div>
<div id="chip" ${box(200)}>Chip</div>
<div id="shelf" aria-label="Shelf" style="position:absolute;left:400px;top:200px;width:300px;height:120px;border:1px solid #999">Shelf: <span id="shelf-items"></span></div>
<label for="receipt" style="position:absolute;left:360px;top:360px">Receipt</label><input type="file" id="receipt" ${box(360)}>
<p id="file-status" style="position:absolute;left:400px;top:400px;margin:0"></p>
<button id="done" ${box(420)}>Done</button>
<script>
const basket = document.getElementById('basket-items'), shelf = document.getElementById('shelf-items');
document.getElementById('pears').addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'Pears'));
const zone = document.querySelector('[data-testid=basket]');
zone.addEventListener('dragover', (e) => e.preventDefault());
zone.addEventListener('drop', (e) => { e.preventDefault(); basket.textContent = e.dataTransfer.getData('text/plain'); });
const chip = document.getElementById('chip');
let dragging = false;
chip.addEventListener('mousedown', () => { dragging = true; });
document.addEventListener('mousemove', (e) => { if (dragging) { chip.style.left = (e.clientX - 150) + 'px'; chip.style.top = (e.clientY - 16) + 'px'; } });
document.addEventListener('mouseup', (e) => {
  if (!dragging) return;
  dragging = false;
  const r = document.getElementById('shelf').getBoundingClientRect();
  if (e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom) shelf.textContent = 'Chip';
  chip.style.left = '40px'; chip.style.top = '200px';
});
let file = 'none';
document.getElementById('receipt').addEventListener('change', async (e) => {
  const f = e.target.files[0];
  file = f ? f.name + ' ' + f.size + ' bytes, ' + (await f.text()).trim().split('\\n').length + ' lines' : 'none';
  document.getElementById('file-status').textContent = file;
});
document.getElementById('done').addEventListener('click', () => {
  location.href = '/board-result?basket=' + encodeURIComponent(basket.textContent) + '&shelf=' + encodeURIComponent(shelf.textContent) + '&file=' + encodeURIComponent(file);
});
</script>`,
        ),
      );
    }
    if (url.pathname === '/framed-board') {
      return html(
        page('Framed board', `<iframe src="/board" title="board" style="position:absolute;left:0;top:0;width:780px;height:560px;border:0"></iframe>`),
      );
    }
    if (url.pathname === '/board-result') {
      const q = url.searchParams;
      return html(
        page(
          'Board result',
          `<p id="outcome" ${box(40)}>${`basket ${q.get('basket')}; shelf ${q.get('shelf')}; receipt ${q.get('file')}`.replace(/[<&]/g, '')}</p>`,
        ),
      );
    }
    if (url.pathname === '/result') {
      // CSS only: no test id, role, label or id on the summary.
      const summary = signedIn
        ? `Found ${url.searchParams.get('q')} (${url.searchParams.get('size')}) for ${decodeURIComponent(signedIn)}, gift ${url.searchParams.get('gift')}`
        : 'Not signed in';
      return html(page('Result', `<div class="panel" ${box(40)}><span class="summary">${summary.replace(/[<&]/g, '')}</span></div>`));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let h: HostedFixture;
let studio: StudioBrowser;
let site: { server: Server; url: string };
let owner: Client;
let member: Client;
let other: Client;
let wsBase: string;
const origin = () => h.url;

beforeAll(async () => {
  site = await startDemoSite();
  h = await startHosted({ egressAllow: FIXTURE_SITES }, { studio: { maxSessionsPerOrg: 2 } });
  studio = h.studio;
  wsBase = h.url.replace(/^http/, 'ws');
  owner = new Client(h.url);
  other = new Client(h.url);
  member = new Client(h.url);
  const mine = await owner.signup('owner@example.test', 'correct horse battery', 'Studio org');
  await other.signup('other@example.test', 'correct horse battery', 'Other org');
  await member.signup('member@example.test');
  // The member joins the owner's org as a member.
  await owner.addMember(member, 'member@example.test', mine.org.id);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

describe('the studio WebSocket refuses before upgrading', () => {
  it('foreign or missing Origin, no cookie, a member, another org, a published session, a plain GET', async () => {
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

describe('drags and uploads', () => {
  it('an HTML5 drag and a pointer drag become drag ops, a file chosen for the page an upload op; relayed for real, published and run', async () => {
    const a = (
      await owner.call('POST', '/api/automations', { name: 'board', site: `${site.url}/board`, task: 'Fill the basket and the shelf, attach the receipt' })
    ).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    if (process.env.STUDIO_DEBUG) viewer.ws.on('message', (d) => !d.toString().startsWith('{"type":"frame"') && console.log(d.toString().slice(0, 300)));
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/board', true);
    const drag = (from: { x: number; y: number }, to: { x: number; y: number }) => {
      viewer.send({ type: 'mouse', action: 'move', ...from });
      viewer.send({ type: 'mouse', action: 'down', ...from, button: 'left', clickCount: 1 });
      // In steps, as a hand moves (each is relayed: moves are only coalesced while one is in flight).
      for (let i = 1; i <= 10; i++)
        viewer.send({ type: 'mouse', action: 'move', x: from.x + ((to.x - from.x) * i) / 10, y: from.y + ((to.y - from.y) * i) / 10 });
      viewer.send({ type: 'mouse', action: 'up', ...to, button: 'left', clickCount: 1 });
    };
    // HTML5: Pears onto the basket.
    drag(at(40), { x: 550, y: 100 });
    await viewer.opCount(2);
    // Pointer: the chip onto the shelf.
    drag(at(200), { x: 550, y: 260 });
    await viewer.opCount(3);

    // The file input: the chooser is the service's; the viewer sends the file in chunks.
    viewer.click(at(360));
    const chooser = await viewer.next((m) => m.type === 'file_chooser');
    expect(chooser).toMatchObject({ multiple: false, accept: '', max_bytes: 10 * 1024 * 1024, max_files: 1 });
    const RECEIPT = Buffer.from('item,total\npears,3\nchip,1\n'.repeat(2000));
    viewer.send({ type: 'files', files: [{ name: 'receipt.csv', size: RECEIPT.length }] });
    for (let at = 0; at < RECEIPT.length; at += 40_000) viewer.send({ type: 'file_data', data: RECEIPT.subarray(at, at + 40_000).toString('base64') });
    const received = await viewer.next((m) => m.type === 'files_received');
    expect(received.files).toEqual([{ name: 'receipt.csv', digest: `sha256:${createHash('sha256').update(RECEIPT).digest('hex')}`, size: RECEIPT.length }]);
    await viewer.opCount(4);
    viewer.click(at(420));
    await viewer.loaded('/board-result');
    viewer.send({ type: 'extract', field: 'outcome' });
    await viewer.next((m) => m.type === 'extract_armed');
    viewer.click(at(40));
    const ops = await viewer.opCount(6);
    viewer.close();

    expect(ops.map((o: any) => o.kind)).toEqual(['navigate', 'drag', 'drag', 'upload', 'click', 'extract']);
    const [, html5, pointer, upload] = ops;
    expect(html5).toMatchObject({ source: { text: 'Pears' }, target: { testid: 'basket' } });
    expect(pointer.source).toMatchObject({ text: 'Chip' });
    // The text first, then the id (a short CSS path may follow).
    expect([pointer.target.text, pointer.target.fallbacks[0]]).toEqual(['Shelf:', { css: '#shelf' }]);
    expect(upload).toEqual({ kind: 'upload', target: expect.objectContaining({ label: 'Receipt' }), files: 'receipt.csv' });
    // What the page did while it was recorded: the drops and the file reached it.
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.files).toEqual([{ name: 'receipt.csv', digest: received.files[0].digest, size: RECEIPT.length }]);
    expect(viewer.messages.find((m) => m.type === 'url' && /board-result/.test(m.url))?.url).toContain('basket=Pears&shelf=Chip&file=receipt.csv%20');

    // Published and run: the run drags, drops and uploads the stored file (read by digest, for this org).
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const run = await fetch(`${h.url}/v1/run/board`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const result = (await run.json()) as any;
    expect([run.status, result.status, result.error]).toEqual([200, 'succeeded', undefined]);
    expect(result.output).toEqual({ outcome: `basket Pears; shelf Chip; receipt receipt.csv ${RECEIPT.length} bytes, 6000 lines` });
  }, 120_000);
});

describe('upload refusals', () => {
  it('files without a chooser, too large, badly named, more bytes than announced, a cancel; a chooser inside a frame: nothing captured', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'upload-refusals', site: `${site.url}/board`, task: 'x' })).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/board', true);
    const error = async (pattern: RegExp) => (await viewer.next((m) => m.type === 'error' && pattern.test(m.message), false)) as { error: string };
    let waiting = error(/no file chooser is open/);
    viewer.send({ type: 'files', files: [{ name: 'a.txt', size: 1 }] });
    expect((await waiting).error).toBe('invalid_message');

    viewer.click(at(360));
    await viewer.next((m) => m.type === 'file_chooser');
    waiting = error(/at most 10485760 bytes/);
    viewer.send({ type: 'files', files: [{ name: 'big.bin', size: 10 * 1024 * 1024 + 1 }] });
    expect((await waiting).error).toBe('file_too_large');
    for (const name of ['../up.txt', 'a/b.txt', '', 'x'.repeat(201), 'bell\u0007.txt']) {
      waiting = error(/a file name is/);
      viewer.send({ type: 'files', files: [{ name, size: 1 }] });
      await waiting;
    }
    waiting = error(/at most 1 files|1 to 10 files/);
    viewer.send({ type: 'files', files: [] });
    await waiting;
    viewer.send({ type: 'files', files: [{ name: 'two.txt', size: 2 }] });
    waiting = error(/more bytes than announced/);
    viewer.send({ type: 'file_data', data: Buffer.from('three').toString('base64') });
    await waiting;
    waiting = error(/file_data comes after a files message/);
    viewer.send({ type: 'file_data', data: 'AAAA' });
    await waiting;
    viewer.send({ type: 'files', files: [{ name: 'two.txt', size: 2 }] });
    viewer.send({ type: 'file_cancel' });
    waiting = error(/file_data comes after a files message/);
    viewer.send({ type: 'file_data', data: Buffer.from('ok').toString('base64') });
    await waiting;

    // A file input inside a frame: its chooser is refused with a notice.
    viewer.send({ type: 'navigate', url: `${site.url}/framed-board` });
    await viewer.loaded('/framed-board', true);
    viewer.click(at(360));
    await viewer.next((m) => m.type === 'notice' && /file chooser that cannot be captured/.test(m.message));
    viewer.close();
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.captured_ops.map((o: any) => o.kind)).toEqual(['navigate', 'navigate']);
    expect(session.files).toEqual([]);
    expect(
      viewer.messages.some(
        (m) => m.type === 'file_chooser' && viewer.messages.indexOf(m) > viewer.messages.findIndex((x) => x.type === 'url' && /framed/.test(x.url)),
      ),
    ).toBe(false);
  }, 120_000);
});

describe('locator quality', () => {
  it('the primary is the highest-ranked unique strategy and the next ones are its fallbacks; the run survives renamed ids through them and fails locator_drift when the element is gone', async () => {
    driftVariant = 'base';
    const a = (
      await owner.call('POST', '/api/automations', { name: 'drift-demo', site: `${site.url}/drift`, task: 'Send to an address and read the confirmation' })
    ).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/drift');
    viewer.click(at(40));
    viewer.send({ type: 'text', text: 'ada@example.test' });
    viewer.click(at(100));
    await viewer.opCount(3);
    viewer.send({ type: 'extract', field: 'confirmation' });
    await viewer.next((m) => m.type === 'extract_armed');
    viewer.click({ x: 60, y: 176 });
    const ops = await viewer.opCount(4);
    viewer.close();
    // Ranked as codegen ranks: test id, then role + name, then label (or text), then the id; three fallbacks.
    expect(ops[1]).toEqual({
      kind: 'fill',
      target: { testid: 'email-input', fallbacks: [{ role: 'textbox', name: 'Email' }, { label: 'Email' }, { css: '#email' }] },
      value: 'ada@example.test',
    });
    expect(ops[2]).toEqual({
      kind: 'click',
      target: { testid: 'send-button', fallbacks: [{ role: 'button', name: 'Send' }, { text: 'Send' }, { css: '#send' }] },
    });
    expect(ops[3]).toMatchObject({ kind: 'extract', name: 'confirmation', target: { role: 'status' } });

    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const call = async () => {
      const res = await fetch(`${h.url}/v1/run/drift-demo`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return (await res.json()) as any;
    };
    const journalOf = async (runId: string) => {
      const list = (await owner.call('GET', '/api/executions?flow=drift-demo')).body.executions;
      const execution = list.find((e: any) => e.run_id === runId);
      return (await owner.call('GET', `/api/executions/${execution.id}`)).body.journal as any[];
    };
    expect((await call()).output).toEqual({ confirmation: 'Sent to ada@example.test' });

    // Ids renamed: the fallbacks (role + name) carry the run, each such step with a drift warning.
    driftVariant = 'renamed';
    const renamed = await call();
    expect([renamed.status, renamed.output]).toEqual(['succeeded', { confirmation: 'Sent to ada@example.test' }]);
    const warned = (await journalOf(renamed.run_id)).filter((e) => e.event === 'step_succeeded' && e.warnings?.some((w: any) => w.code === 'drift'));
    expect(warned.map((e) => e.step)).toEqual(['fill_2', 'click_3']);
    expect(warned[1].warnings[0].data.matched).toBe('role=button[name="Send"]');
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('published');

    // The button removed: no locator matches, the step fails locator_drift and the automation is failing.
    driftVariant = 'removed';
    const removed = await call();
    expect([removed.status, removed.error?.code, removed.error?.step]).toEqual(['failed', 'locator_drift', 'click_3']);
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation).toMatchObject({ status: 'failing', needs_attention: true });
    driftVariant = 'base';
  }, 120_000);
});

describe('keepalive of the live sockets', () => {
  it('a viewer that answers no pings is dropped (1006) and frees its studio session and its run live view place; one that answers stays', async () => {
    // Pings every second here; the run live view has one place per org and no frames source (only
    // the sockets are under test).
    const k = await startHosted(
      { streamHeartbeatSeconds: 1, egressAllow: FIXTURE_SITES },
      // A frames source that sends none: only the sockets are under test, no run is watched.
      { runLive: { maxViewersPerOrg: 1 }, screencast: { subscribe: () => () => {} } },
    );
    const opened: Viewer[] = [];
    try {
      const o = new Client(k.url);
      await o.signup('keepalive@example.test', 'correct horse battery', 'Keepalive');
      const a = (await o.call('POST', '/api/automations', { name: 'keepalive', site: `${site.url}/`, task: 'x' })).body.automation;
      const ws = k.url.replace(/^http/, 'ws');
      const headers = { origin: k.url, cookie: `svc_session=${o.cookie}` };

      // The studio: a deaf viewer and one that answers, side by side.
      const before = k.studio.openPages();
      const deaf = await Viewer.open(`${ws}/api/authoring/${a.id}/live?width=640&height=480`, headers, { autoPong: false });
      const polite = await Viewer.open(`${ws}/api/authoring/${a.id}/live?width=640&height=480`, headers);
      opened.push(deaf, polite);
      await polite.next((m) => m.type === 'ready');
      // The deaf viewer is dropped after two unanswered pings, which on a loaded machine can come before
      // its page is ready: only its drop and the freed place are asserted, never its 'ready'.
      expect((await deaf.closed).code).toBe(1006);
      await expect.poll(() => k.studio.openPages(), { timeout: 20_000 }).toBe(before + 1);
      await polite.pings(2);
      expect(polite.ws.readyState).toBe(polite.ws.OPEN);
      polite.close();
      await polite.closed;
      await expect.poll(() => k.studio.openPages(), { timeout: 20_000 }).toBe(before);

      // The run live view: the deaf viewer holds the org's one place until it is dropped.
      const url = `${ws}/api/automations/${a.id}/live`;
      const deafView = await Viewer.open(url, headers, { autoPong: false });
      opened.push(deafView);
      await deafView.next((m) => m.type === 'waiting');
      const full = await refused(url, headers);
      expect([full.status, full.body.error]).toEqual([429, 'rate_limited']);
      expect((await deafView.closed).code).toBe(1006);
      const next = await Viewer.open(url, headers);
      opened.push(next);
      await next.next((m) => m.type === 'waiting');
      await next.pings(3);
      expect(next.ws.readyState).toBe(next.ws.OPEN);
    } finally {
      for (const v of opened) v.ws.terminate();
      await k.close();
    }
  }, 120_000);
});

describe('limits and refusals', () => {
  it('the process-wide cap, the idle close (which frees the place and the browser context), new tabs and frames refused', async () => {
    let shown: Viewer | undefined;
    const small = await startHosted({ egressAllow: FIXTURE_SITES }, { studio: { maxSessions: 1, idleTimeoutMs: 6000 } });
    try {
      const o = new Client(small.url);
      const p = new Client(small.url);
      await o.signup('solo@example.test', 'correct horse battery', 'Solo');
      await p.signup('peer@example.test', 'correct horse battery', 'Peer');
      const mine = (await o.call('POST', '/api/automations', { name: 'popups', site: `${site.url}/popup`, task: 'x' })).body.automation;
      const theirs = (await p.call('POST', '/api/automations', { name: 'theirs', site: `${site.url}/`, task: 'x' })).body.automation;
      const ws = small.url.replace(/^http/, 'ws');
      const before = small.studio.openPages();
      const viewer = await Viewer.open(`${ws}/api/authoring/${mine.id}/live?width=640&height=480`, { origin: small.url, cookie: `svc_session=${o.cookie}` });
      shown = viewer;
      await viewer.next((m) => m.type === 'ready');
      expect(small.studio.openPages()).toBe(before + 1);
      // Another org, same process: the one place is taken.
      const full = await refused(`${ws}/api/authoring/${theirs.id}/live`, { origin: small.url, cookie: `svc_session=${p.cookie}` });
      expect([full.status, full.body.error]).toEqual([429, 'rate_limited']);

      // Complete: the iframe's document (and its capture script) is there too.
      await viewer.loaded('/popup', true);
      // A click into the frame is refused; the link's click is captured and its new tab closed.
      viewer.click({ x: 140, y: 200 });
      await viewer.next((m) => m.type === 'notice' && /frames/.test(m.message));
      viewer.click(at(40));
      await viewer.next((m) => m.type === 'notice' && /new tabs/.test(m.message));
      const ops = await viewer.opCount(2);
      expect(ops[1]).toMatchObject({ kind: 'click', target: { role: 'link', name: 'Open in a new tab' } });
      // Bad messages are answered, and the session goes on.
      viewer.send({ type: 'mouse', action: 'hover', x: 1, y: 1 });
      await viewer.next((m) => m.type === 'error' && m.error === 'invalid_message');
      viewer.send({ type: 'extract', field: '1bad' });
      await viewer.next((m) => m.type === 'error' && /identifier/.test(m.message));
      viewer.send({ type: 'extract', field: 'ok', all: 'yes' });
      await viewer.next((m) => m.type === 'error' && m.error === 'invalid_message' && /extract\.all must be true or false/.test(m.message));
      // A flood: past 400 messages in a second the rest is dropped, said once.
      for (let i = 0; i < 450; i++) viewer.send({ type: 'ping' });
      await viewer.next((m) => m.type === 'error' && m.error === 'rate_limited');
      expect(viewer.messages.filter((m) => m.type === 'error' && m.error === 'rate_limited')).toHaveLength(1);

      // No more input: the idle close, then the place is free again.
      const closed = new Promise<number>((r) => viewer.ws.once('close', (code) => r(code)));
      expect(await viewer.next((m) => m.type === 'closed')).toMatchObject({ reason: 'idle' });
      expect(await closed).toBe(4000);
      await expect.poll(() => small.studio.openPages(), { timeout: 20_000 }).toBe(before);
      const next = await Viewer.open(`${ws}/api/authoring/${theirs.id}/live`, { origin: small.url, cookie: `svc_session=${p.cookie}` });
      await next.next((m) => m.type === 'ready');
      await next.loaded('/');
      // Logging out ends the capture at the next action: nothing more is stored.
      expect((await p.call('POST', '/api/auth/logout')).status).toBeLessThan(300);
      next.click(at(160));
      expect(await next.next((m) => m.type === 'closed')).toMatchObject({ reason: 'unauthenticated' });
      const stored = await small.storage.authoring.get(theirs.org_id, theirs.id);
      expect(stored?.captured_ops).toEqual([{ kind: 'navigate', url: `${site.url}/` }]);
    } finally {
      // On a failure, what the viewer was told (frames left out).
      if (process.env.STUDIO_DEBUG) console.log(JSON.stringify(shown?.messages.filter((m) => m.type !== 'frame')));
      await small.close();
    }
  }, 90_000);
});

describe('locator ranking edge cases', () => {
  it('names that match several elements and generated ids give way to a short CSS path; a stable id is used', async () => {
    const actions: any[] = [];
    let arrived: () => void = () => {};
    let loaded!: () => void;
    const ready = new Promise<void>((r) => (loaded = r));
    const page = await studio.open({
      url: `${site.url}/dupes`,
      viewport: { width: 640, height: 480 },
      onFrame: (_f, ack) => ack(),
      onAction: (a) => {
        actions.push(a);
        arrived();
      },
      onNotice: () => {},
      onLoaded: () => loaded(),
    });
    const next = (n: number) => (actions.length >= n ? Promise.resolve() : new Promise<void>((r) => (arrived = () => actions.length >= n && r())));
    try {
      await ready;
      const click = (p: { x: number; y: number }) => {
        page.input({ type: 'mouse', action: 'down', ...p, button: 'left', clickCount: 1 });
        page.input({ type: 'mouse', action: 'up', ...p, button: 'left', clickCount: 1 });
      };
      click(at(40));
      click(at(100));
      await next(2);
      await page.extract('total');
      click(at(160));
      await next(3);
      const [first, second, total] = actions;
      for (const a of [first, second]) {
        expect(a.kind).toBe('click');
        expect(Object.keys(a.target).filter((k) => k !== 'fallbacks')).toEqual(['css']);
        expect(a.target.css).not.toContain('ember');
        expect(JSON.stringify(a.target)).not.toContain('"role"');
      }
      expect(first.target.css).not.toBe(second.target.css);
      // The stable id leads; the text (the output) is the last fallback.
      expect(total).toMatchObject({ kind: 'extract', target: { css: '#totals' }, name: 'total' });
      expect(total.target.fallbacks.at(-1)).toEqual({ text: 'Total 42' });
    } finally {
      await page.close();
    }
  });
});

describe('the studio browser under an egress guard', () => {
  it('a site the guard refuses is not loaded, and the viewer is told why', async () => {
    const guarded = createStudioBrowser({ egress: createEgressGuard({}) });
    const notices: string[] = [];
    let told!: () => void;
    const notice = new Promise<void>((r) => (told = r));
    try {
      const page = await guarded.open({
        url: `${site.url}/`,
        viewport: { width: 640, height: 480 },
        onFrame: (_f, ack) => ack(),
        onAction: () => {},
        onNotice: (m) => {
          notices.push(m);
          if (/may not reach/.test(m)) told();
        },
      });
      await notice;
      expect(notices.find((m) => /may not reach/.test(m))).toContain(new URL(site.url).host);
      await page.close();
    } finally {
      await guarded.dispose();
    }
  });
});

describe('the studio page of the web app', () => {
  it('records in the browser: frames on the canvas, input relayed, steps listed live, a fill marked as an input slot, a step deleted', async () => {
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

      const canvas = page.getByLabel('Remote browser');
      const box = (await canvas.boundingBox())!;
      const width = Number(await canvas.getAttribute('width'));
      const scale = box.width / width;
      const clickAt = (p: { x: number; y: number }) => page.mouse.click(box.x + p.x * scale, box.y + p.y * scale);
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
      await expect.poll(async () => (await owner.call('GET', `/api/authoring/${a.id}`)).body.session.input_slots, { timeout: 20_000 }).toEqual(['username']);
      // Delete the click: four steps are left.
      await page.getByRole('button', { name: 'Delete step 3' }).click();
      await expect.poll(async () => (await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops.length, { timeout: 20_000 }).toBe(4);
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
