import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { expect } from 'vitest';
import { resolveBrowser } from '../../adapters/executor-playwright/resolve-browser.js';
import { imageRegions, NEAR_BLACK } from './image-pixels.js';

/**
 * The loopback side of the hosted secret canary (test/e2e/hosted-canary.test.ts): the site its flows
 * talk to (a form page that reads the typed secret back, a careless API that echoes it), the webhook
 * receiver, and the check of the stored screenshots of the form page.
 */

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

function formPage(withButton: boolean): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Canary form</title><style>
body{margin:0;font:16px sans-serif;background:#fff}
label,input,button,#status{position:absolute}
label{left:20px} input{left:140px;width:300px;height:30px;border:1px solid #888;background:#fff;color:#000;font-size:16px;padding:0 4px}
#l1,#pw{top:20px} #l2,#name{top:80px} button{left:140px;top:140px} #status{left:20px;top:190px;margin:0}
#echo{position:absolute;left:20px;top:240px;display:inline-block;width:2px;height:2px}
</style></head><body>
<label id="l1" for="pw">Password</label><input id="pw" type="password" autocomplete="off">
<label id="l2" for="name">Name</label><input id="name" type="text" autocomplete="off">
${withButton ? '<button id="save" type="button">Save</button>' : ''}
<p id="status">waiting</p><span id="echo" data-typed=""></span>
<script>
for (const id of ['pw', 'name']) document.getElementById(id).addEventListener('input', (e) => fetch('/typed?field=' + id, { method: 'POST', body: e.target.value }));
const save = document.getElementById('save');
if (save) save.addEventListener('click', () => {
  document.getElementById('status').textContent = 'saved';
  document.getElementById('echo').dataset.typed = document.getElementById('name').value;
});
</script></body></html>`;
}

export interface Site {
  url: string;
  /** What the site received (the secret's legitimate destination: never searched for leaks). */
  received: { path: string; value: string }[];
  server: Server;
}

export async function startSite(): Promise<Site> {
  const received: Site['received'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = await readBody(req);
      if (req.method === 'GET' && (url.pathname === '/form' || url.pathname === '/form-missing')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(formPage(url.pathname === '/form'));
        return;
      }
      if (req.method === 'POST' && url.pathname === '/typed') {
        received.push({ path: `/typed ${url.searchParams.get('field')}`, value: body });
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'POST' && (url.pathname === '/api/ok' || url.pathname === '/api/fail')) {
        const k = url.searchParams.get('k') ?? '';
        let token = '';
        try {
          token = (JSON.parse(body) as { token?: string }).token ?? '';
        } catch {
          // not JSON
        }
        received.push({ path: `${url.pathname} query`, value: k }, { path: `${url.pathname} body`, value: token });
        // A careless API: it echoes what it got, plain, percent-encoded and in base64.
        const echo = { echo: token, echo_uri: encodeURIComponent(token), echo_b64: Buffer.from(token).toString('base64'), note: 'echoed' };
        res
          .writeHead(url.pathname === '/api/ok' ? 200 : 500, { 'content-type': 'application/json', 'x-echo-b64': Buffer.from(k).toString('base64') })
          .end(JSON.stringify(echo));
        return;
      }
      res.writeHead(404).end();
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

export interface Hook {
  path: string;
  headers: Record<string, unknown>;
  body: string;
}

/** A webhook endpoint that answers 200 and keeps every delivery in `hooks`. */
export async function startReceiver(): Promise<{ url: string; server: Server; hooks: Hook[] }> {
  const hooks: Hook[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      hooks.push({ path: req.url ?? '/', headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hooks };
}

/**
 * Decode each screenshot (a JPEG) in Chromium and read the pixels of both fields: the mask's black, or
 * (before the fill) no text. Black allows the JPEG's rounding (every channel at most NEAR_BLACK): text
 * or dots in a field would be far lighter.
 */
export async function checkScreenshots(siteUrl: string, shots: { image: Uint8Array; afterNameFill: boolean; afterPasswordFill: boolean }[]): Promise<void> {
  const { executablePath } = await resolveBrowser();
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${siteUrl}/form`);
    const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
    const fields = { pw: await box('#pw'), name: await box('#name') };
    for (const [i, shot] of shots.entries()) {
      // The fields' insides (a pixel clear of each edge).
      const inner = (r: { x: number; y: number; width: number; height: number }) => ({
        x: Math.ceil(r.x) + 1,
        y: Math.ceil(r.y) + 1,
        width: Math.floor(r.width) - 2,
        height: Math.floor(r.height) - 2,
      });
      const decoded = await imageRegions(page, `data:image/jpeg;base64,${Buffer.from(shot.image).toString('base64')}`, [inner(fields.pw), inner(fields.name)]);
      const count = (d: Uint8Array) => {
        let black = 0;
        let dark = 0;
        for (let p = 0; p < d.length; p += 4) {
          if (Math.max(d[p]!, d[p + 1]!, d[p + 2]!) <= NEAR_BLACK) black++;
          else if (d[p]! < 128) dark++;
        }
        return { pixels: d.length / 4, black, dark };
      };
      const stats = { width: decoded.width, height: decoded.height, pw: count(decoded.regions[0]!), name: count(decoded.regions[1]!) };
      expect([i, stats.width, stats.height]).toEqual([i, 1280, 720]);
      // A masked field is all black; an empty one has no dark pixel (no text, no dots).
      if (shot.afterPasswordFill) expect([i, 'pw', stats.pw.black]).toEqual([i, 'pw', stats.pw.pixels]);
      else expect([i, 'pw', stats.pw.dark]).toEqual([i, 'pw', 0]);
      if (shot.afterNameFill) expect([i, 'name', stats.name.black]).toEqual([i, 'name', stats.name.pixels]);
      else expect([i, 'name', stats.name.dark]).toEqual([i, 'name', 0]);
    }
  } finally {
    await browser.close();
  }
}
