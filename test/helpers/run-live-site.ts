import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Client } from './hosted.js';
import { imageRegions } from './image-pixels.js';

/**
 * The run live view's loopback site (test/e2e/hosted-run-live.test.ts): a form with a secret token
 * field and a name field at fixed places, which reports the input it gets and holds the run on a
 * request the test releases; the automation that fills it; and what the frames show of both fields.
 */

/** The org secret the form's token field is filled with: never in a frame or a message. */
export const SECRET = 'TOPSECRET-4242-XYZ';
export const FIELD = { left: 40, width: 400, height: 60 };
const TOKEN_TOP = 140;
export const NAME_TOP = 40;

const formPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Form</title><style>
body { margin: 0; font: 16px sans-serif; background: #fff; }
.f { position: absolute; left: ${FIELD.left}px; width: ${FIELD.width}px; height: ${FIELD.height}px; box-sizing: border-box; border: 0; padding: 0 10px; font: 32px monospace; background: #fff; color: #111; }
@keyframes spin { to { transform: rotate(360deg); } }
#spin { position: absolute; left: 640px; top: 40px; width: 60px; height: 60px; background: #c33; animation: spin 2s steps(8) infinite; }
</style></head><body>
<label for="token" style="position:absolute;left:470px;top:160px">Token</label><input id="token" class="f" style="top:${TOKEN_TOP}px" autocomplete="off">
<label for="name" style="position:absolute;left:470px;top:60px">Name</label><input id="name" class="f" style="top:${NAME_TOP}px" autocomplete="off">
<div id="spin"></div>
<div id="status" style="position:absolute;left:40px;top:240px">holding</div>
<div id="events" style="position:absolute;left:40px;top:300px">0</div>
<div id="inputs" style="position:absolute;left:40px;top:340px">0</div>
<script>
let events = 0, inputs = 0;
// Input from a person (or a relayed viewer): pointer, mouse, keys, wheel. A fill sends none of these.
for (const t of ['pointerdown', 'pointermove', 'mousedown', 'mouseup', 'mousemove', 'click', 'keydown', 'keyup', 'wheel']) {
  addEventListener(t, (e) => { if (e.isTrusted) document.getElementById('events').textContent = String(++events); }, true);
}
addEventListener('input', () => { document.getElementById('inputs').textContent = String(++inputs); }, true);
const report = (el) => {
  const cs = getComputedStyle(el);
  fetch('/report', { method: 'POST', body: JSON.stringify({ field: el.id, color: cs.color, fill: cs.webkitTextFillColor, background: cs.backgroundColor, length: el.value.length }) });
};
document.getElementById('token').addEventListener('input', (e) => report(e.target));
document.getElementById('name').addEventListener('input', (e) => {
  report(e.target);
  fetch('/hold', { cache: 'no-store' }).then((r) => r.text()).then(() => { document.getElementById('status').textContent = 'released'; });
}, { once: true });
</script></body></html>`;

export type LiveSite = Awaited<ReturnType<typeof startLiveSite>>;

/** The loopback site: the form, its reports, and the held requests the test releases. */
export async function startLiveSite() {
  const reports: any[] = [];
  let held: ServerResponse[] = [];
  let open = false;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/form') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(formPage);
    if (url.pathname === '/report' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        reports.push(JSON.parse(body));
        res.writeHead(204).end();
      });
      return;
    }
    if (url.pathname === '/hold') {
      if (open) return res.writeHead(200, { 'content-type': 'text/plain' }).end('released');
      held.push(res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reports,
    held: () => held.length,
    release() {
      for (const res of held) res.writeHead(200, { 'content-type': 'text/plain' }).end('released');
      held = [];
    },
    /** Release what is held and answer every later hold at once (true), or hold again (false). */
    setOpen(value: boolean) {
      open = value;
      if (value) this.release();
    },
  };
}

/** Create, capture and publish the form automation; its secret slot `token` reads the org secret. */
export async function publishForm(c: Client, siteUrl: string, name: string) {
  const a = (await c.call('POST', '/api/automations', { name, site: `${siteUrl}/form`, task: 'Fill the form and wait' })).body.automation;
  const ops = [
    { kind: 'navigate', url: `${siteUrl}/form` },
    // The secret first: a frame that shows the name typed was rendered after the secret went in.
    { kind: 'fill', target: { label: 'Token' }, slot: 'token' },
    { kind: 'fill', target: { label: 'Name' }, value: 'Ada Lovelace' },
    { kind: 'wait', target: { css: '#status' }, text: 'released', timeout_ms: 300_000 },
    { kind: 'extract', target: { css: '#events' }, name: 'events' },
    { kind: 'extract', target: { css: '#inputs' }, name: 'inputs' },
  ];
  expect((await c.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, secret_slots: ['token'] })).status).toBe(200);
  const published = await c.call('POST', `/api/authoring/${a.id}/publish`);
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  expect((await c.call('PUT', '/api/secrets/token', { value: SECRET })).status).toBe(200);
  return a as { id: string; org_id: string; name: string };
}

export const gatewayRun = (base: string, key: string, flow: string) =>
  fetch(`${base}/v1/run/${flow}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as any }),
  );

/**
 * Luminance (min, max) of the inner part of each field in each frame, decoded by Chromium: the
 * token field and the name field, `inset` px inside their boxes (clear of edges and focus rings).
 */
export async function fieldLuminance(
  page: Page,
  frames: { data: string; width: number }[],
): Promise<{ token: { min: number; max: number }; name: { min: number; max: number } }[]> {
  const inset = 10;
  const box = (top: number) => ({ x: FIELD.left + inset, y: top + inset, width: FIELD.width - 2 * inset, height: FIELD.height - 2 * inset });
  const measure = (d: Uint8Array) => {
    let min = 255;
    let max = 0;
    for (let i = 0; i < d.length; i += 4) {
      const l = (d[i]! + d[i + 1]! + d[i + 2]!) / 3;
      if (l < min) min = l;
      if (l > max) max = l;
    }
    return { min, max };
  };
  const out = [];
  for (const f of frames) {
    const { regions } = await imageRegions(page, `data:image/jpeg;base64,${f.data}`, [box(TOKEN_TOP), box(NAME_TOP)], f.width);
    out.push({ token: measure(regions[0]!), name: measure(regions[1]!) });
  }
  return out;
}

/** Text on a light field: dark glyph pixels and light background pixels both present. */
export const showsText = (l: { min: number; max: number }) => l.min < 110 && l.max > 190;
/** Painted over: nothing light in the field. */
export const blackedOut = (l: { min: number; max: number }) => l.max < 90;
