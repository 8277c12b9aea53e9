// Studio live capture benchmark (issue 18): the hosted service (PGlite in memory, node-http) with a
// real Chromium studio browser, driven over its WebSocket by a viewer in this process.
// - session open: upgrade -> `ready`, and -> first frame (a fresh context per session, warm browser);
// - click -> captured op: mouse down/up sent until the `op` message (the capture script, the binding,
//   the append to the authoring session);
// - drag -> captured op: an HTML5 drag (down, 10 moves, up) relayed with CDP drag events until its `op`;
// - upload -> captured op: a file chooser answered with 1 MiB and 10 MiB over the socket (chunks of
//   40 KiB, base64) until the `upload` op (the file given to the input and stored in the session);
// - frames: frames per second and KiB per frame while a page animates, at two viewport sizes;
// - input latency: a click sent over the socket until the page's own mousedown event (the page stamps
//   it with its wall clock; one click at a time, each captured before the next, performance.timeOrigin + now(), and reports it to the site), side by side
//   with the same click sent by Playwright straight to a local Chromium (what a user would script).
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import WebSocket from 'ws';
import { createHostedService } from '../dist/index.js';
import { createStudioBrowser } from '../dist/adapters/executor-playwright.js';
import { createSqlServiceStorage, createSqlStorage } from '../dist/adapters/storage-sql.js';
import { serveNodeHttp } from '../dist/adapters/node-http.js';
import { median, percentile, writeSection } from './results.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const OPENS = QUICK ? 3 : 8;
const CLICKS = QUICK ? 8 : 30;
const FRAME_MS = QUICK ? 1500 : 4000;
const DRAGS = QUICK ? 5 : 20;
const UPLOADS = QUICK ? 2 : 5;
const loadAtStart = os.loadavg()[0];

/** Page-side mousedown stamps (ms, wall clock), reported by the /input page. */
const marks = [];
let markWaiter;
const nextMark = () => new Promise((r) => (markWaiter = r));
const wallNow = () => performance.timeOrigin + performance.now();

const site = createServer((req, res) => {
  if (req.url.startsWith('/mark?')) {
    const t = Number(new URL(req.url, 'http://x').searchParams.get('t'));
    marks.push(t);
    markWaiter?.(t);
    return res.writeHead(204).end();
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  if (req.url.startsWith('/input'))
    return res.end(`<!doctype html><html><body style="margin:0"><div id="b" style="position:absolute;left:0;top:0;width:800px;height:600px"></div>
<script>document.getElementById('b').addEventListener('mousedown', () => { const t = performance.timeOrigin + performance.now(); fetch('/mark?t=' + t); });</script></body></html>`);
  // A still page (frames come only when it changes): each click paints the block another colour.
  if (req.url.startsWith('/still'))
    return res.end(`<!doctype html><html><body style="margin:0"><div id="b" style="position:absolute;left:0;top:0;width:800px;height:600px;background:#fff"></div>
<script>let n = 0; const b = document.getElementById('b'); b.addEventListener('mousedown', () => { b.style.background = ['#4f46e5', '#f59e0b', '#10b981'][n++ % 3]; });</script></body></html>`);
  res.end(`<!doctype html><html><head><style>@keyframes spin{to{transform:rotate(360deg)}} .spin{position:absolute;left:400px;top:40px;width:160px;height:160px;background:linear-gradient(90deg,#4f46e5,#f59e0b);animation:spin 1s linear infinite}</style></head>
<body style="margin:0"><button data-testid="go" style="position:absolute;left:40px;top:40px;width:200px;height:40px">Go</button><div class="spin"></div>
<div draggable="true" id="card" style="position:absolute;left:40px;top:120px;width:200px;height:40px">Card</div>
<div data-testid="zone" style="position:absolute;left:40px;top:220px;width:300px;height:100px">Zone</div>
<input type="file" aria-label="Attachment" style="position:absolute;left:40px;top:360px;width:200px;height:30px">
<script>const z = document.querySelector('[data-testid=zone]'); z.addEventListener('dragover', (e) => e.preventDefault()); z.addEventListener('drop', (e) => e.preventDefault());</script></body></html>`);
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const siteUrl = `http://127.0.0.1:${site.address().port}/`;

const pglite = await PGlite.create();
const engineStorage = createSqlStorage({ pglite });
const storage = createSqlServiceStorage(engineStorage);
await storage.init();
const studio = createStudioBrowser();
let service;
const server = await serveNodeHttp({ fetch: (r, e) => service.fetch(r, e) }, { webSocket: true });
service = createHostedService({
  storage,
  settings: { sessionSecrets: ['b'.repeat(40)], publicUrl: server.url, authIpLimitPerMinute: 100000 },
  studio: { browser: studio, maxSessionsPerOrg: 4 },
  web: false,
});

let cookie = '';
async function call(method, path, body) {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  if (set) cookie = set.split(';')[0];
  return res.json();
}
await call('POST', '/api/auth/signup', { email: 'bench@example.test', password: 'correct horse battery', org_name: 'Bench' });
const automation = (await call('POST', '/api/automations', { name: 'bench', site: siteUrl, task: 'bench' })).automation;

function open(width, height) {
  const started = performance.now();
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/authoring/${automation.id}/live?width=${width}&height=${height}`, {
    headers: { origin: server.url, cookie },
  });
  const waiters = [];
  const messages = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    m.at = performance.now();
    m.bytes = data.length;
    messages.push(m);
    for (const w of [...waiters]) if (w.pred(m)) waiters.splice(waiters.indexOf(w), 1), w.resolve(m);
  });
  const next = (pred) => new Promise((resolve) => waiters.push({ pred, resolve }));
  return { ws, started, messages, next, send: (m) => ws.send(JSON.stringify(m)) };
}

// Warm the browser (its launch is not part of a session's cost).
{
  const v = open(800, 600);
  await v.next((m) => m.type === 'frame');
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

const toReady = [];
const toFrame = [];
for (let i = 0; i < OPENS; i++) {
  const v = open(800, 600);
  const ready = await v.next((m) => m.type === 'ready');
  const frame = await v.next((m) => m.type === 'frame');
  toReady.push(ready.at - v.started);
  toFrame.push(frame.at - v.started);
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

const clickMs = [];
{
  const v = open(800, 600);
  await v.next((m) => m.type === 'loaded');
  for (let i = 0; i < CLICKS; i++) {
    const sent = performance.now();
    const got = v.next((m) => m.type === 'op' && m.op.kind === 'click');
    v.send({ type: 'mouse', action: 'down', x: 140, y: 60, button: 'left', clickCount: 1 });
    v.send({ type: 'mouse', action: 'up', x: 140, y: 60, button: 'left', clickCount: 1 });
    clickMs.push((await got).at - sent);
  }
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

// Page change -> frame in the client: on the still page the first frame after a click is the one
// showing the click's change (a still page sends no frames otherwise).
const changeMs = [];
{
  const v = open(800, 600);
  await v.next((m) => m.type === 'loaded' && m.complete);
  const loaded = v.next((m) => m.type === 'loaded' && m.complete);
  v.send({ type: 'navigate', url: `${siteUrl}still` });
  await loaded;
  // Let the navigation's own frames drain: wait for a quiet gap of 300 ms (bounded).
  for (let i = 0; i < 50; i++) {
    const last = v.messages.filter((m) => m.type === 'frame').at(-1)?.at ?? 0;
    if (performance.now() - last > 300) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < CLICKS; i++) {
    const sent = performance.now();
    const got = v.next((m) => m.type === 'frame' && m.at > sent);
    v.send({ type: 'mouse', action: 'down', x: 400, y: 300, button: 'left', clickCount: 1 });
    v.send({ type: 'mouse', action: 'up', x: 400, y: 300, button: 'left', clickCount: 1 });
    changeMs.push((await got).at - sent);
    await new Promise((r) => setTimeout(r, 150)); // one change at a time
  }
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

// Click sent -> the page's mousedown event: through the studio's socket, then Playwright direct.
const inputMs = [];
{
  const v = open(800, 600);
  await v.next((m) => m.type === 'loaded' && m.complete);
  const loaded = v.next((m) => m.type === 'loaded' && m.complete && m.url.includes('/input'));
  v.send({ type: 'navigate', url: `${siteUrl}input` });
  await loaded;
  for (let i = 0; i < CLICKS; i++) {
    const mark = nextMark();
    // At a person's pace: the previous click is captured (its op stored) before the next is sent.
    const captured = v.next((m) => m.type === 'op' && m.op.kind === 'click');
    const sent = wallNow();
    v.send({ type: 'mouse', action: 'down', x: 400, y: 300, button: 'left', clickCount: 1 });
    v.send({ type: 'mouse', action: 'up', x: 400, y: 300, button: 'left', clickCount: 1 });
    inputMs.push((await mark) - sent);
    await captured;
  }
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}
const directMs = [];
{
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  await page.goto(`${siteUrl}input`);
  for (let i = 0; i < CLICKS; i++) {
    await page.mouse.move(400, 300);
    const mark = nextMark();
    const sent = wallNow();
    await page.mouse.down();
    await page.mouse.up();
    directMs.push((await mark) - sent);
  }
  await browser.close();
}

const dragMs = [];
const uploads = [];
{
  const v = open(800, 600);
  await v.next((m) => m.type === 'loaded' && m.complete);
  for (let i = 0; i < DRAGS; i++) {
    const sent = performance.now();
    const got = v.next((m) => m.type === 'op' && m.op.kind === 'drag');
    v.send({ type: 'mouse', action: 'move', x: 140, y: 140 });
    v.send({ type: 'mouse', action: 'down', x: 140, y: 140, button: 'left', clickCount: 1 });
    for (let k = 1; k <= 10; k++) v.send({ type: 'mouse', action: 'move', x: 140 + k * 5, y: 140 + k * 13 });
    v.send({ type: 'mouse', action: 'up', x: 190, y: 270, button: 'left', clickCount: 1 });
    dragMs.push((await got).at - sent);
  }
  for (const mib of [1, 10]) {
    const bytes = Buffer.alloc(mib * 1024 * 1024, 7);
    const times = [];
    for (let i = 0; i < UPLOADS; i++) {
      const chooser = v.next((m) => m.type === 'file_chooser');
      v.send({ type: 'mouse', action: 'down', x: 140, y: 375, button: 'left', clickCount: 1 });
      v.send({ type: 'mouse', action: 'up', x: 140, y: 375, button: 'left', clickCount: 1 });
      await chooser;
      const sent = performance.now();
      const got = v.next((m) => m.type === 'op' && m.op.kind === 'upload');
      v.send({ type: 'files', files: [{ name: `f${mib}.bin`, size: bytes.length }] });
      for (let at = 0; at < bytes.length; at += 40 * 1024) {
        while (v.ws.bufferedAmount > 1024 * 1024) await new Promise((r) => setTimeout(r, 5));
        v.send({ type: 'file_data', data: bytes.subarray(at, at + 40 * 1024).toString('base64') });
      }
      times.push((await got).at - sent);
    }
    uploads.push({ mib, times });
  }
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

const frames = [];
for (const [width, height] of [
  [800, 600],
  [1280, 720],
]) {
  const v = open(width, height);
  await v.next((m) => m.type === 'frame');
  const from = performance.now();
  let x = 0;
  const mover = setInterval(() => v.send({ type: 'mouse', action: 'move', x: (x = (x + 7) % width), y: 300 }), 16);
  await new Promise((r) => setTimeout(r, FRAME_MS));
  clearInterval(mover);
  const got = v.messages.filter((m) => m.type === 'frame' && m.at >= from);
  frames.push({ size: `${width}x${height}`, fps: got.length / (FRAME_MS / 1000), kib: got.reduce((s, m) => s + m.bytes, 0) / Math.max(1, got.length) / 1024 });
  v.ws.close();
  await new Promise((r) => v.ws.once('close', r));
}

await service.dispose();
await server.close();
await studio.dispose();
await engineStorage.dispose();
await pglite.close();
site.close();

const f = (n) => n.toFixed(1);
const body = `
| measure | median | p95 |
|---|---|---|
| session open: upgrade -> \`ready\` (fresh context, warm browser), ${OPENS} sessions | ${f(median(toReady))} ms | ${f(percentile(toReady, 95))} ms |
| session open: upgrade -> first frame | ${f(median(toFrame))} ms | ${f(percentile(toFrame, 95))} ms |
| click -> captured \`op\` message (stored in the session), ${CLICKS} clicks | ${f(median(clickMs))} ms | ${f(percentile(clickMs, 95))} ms (p99 ${f(percentile(clickMs, 99))} ms) |
| click in the canvas -> first frame showing the page's change, in the client (still page), ${CLICKS} clicks | ${f(median(changeMs))} ms | ${f(percentile(changeMs, 95))} ms (p99 ${f(percentile(changeMs, 99))} ms) |
| **input latency**: click sent over the studio socket -> the page's mousedown event (page clock), ${CLICKS} clicks | ${f(median(inputMs))} ms | ${f(percentile(inputMs, 95))} ms (p99 ${f(percentile(inputMs, 99))} ms) |
| the same click by Playwright straight to a local Chromium (\`page.mouse.down\`) -> the page's event | ${f(median(directMs))} ms | ${f(percentile(directMs, 95))} ms (p99 ${f(percentile(directMs, 99))} ms) |
| ratio studio / Playwright direct (medians, same run) | ${(median(inputMs) / median(directMs)).toFixed(2)} | |
| HTML5 drag (down, 10 moves, up) -> captured \`drag\` op, ${DRAGS} drags | ${f(median(dragMs))} ms | ${f(percentile(dragMs, 95))} ms |
${uploads.map((u) => `| upload of ${u.mib} MiB over the socket -> captured \`upload\` op (given to the input, stored), ${UPLOADS} uploads | ${f(median(u.times))} ms | ${f(percentile(u.times, 95))} ms |`).join('\n')}

| viewport | frames/s (animated page, mouse moving) | KiB per frame (JSON message) |
|---|---|---|
${frames.map((x) => `| ${x.size} | ${f(x.fps)} | ${f(x.kib)} |`).join('\n')}

Load average at start ${loadAtStart.toFixed(1)}. Frames are acked only after the socket sent them, so the rate is what the
viewer's connection and the encoder sustain (loopback here).
`;
writeSection('studio', 'Studio live capture', body);
process.stdout.write(body);
