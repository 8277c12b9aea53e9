// Studio live capture benchmark (issue 18): the hosted service (PGlite in memory, node-http) with a
// real Chromium studio browser, driven over its WebSocket by a viewer in this process.
// - session open: upgrade -> `ready`, and -> first frame (a fresh context per session, warm browser);
// - click -> captured op: mouse down/up sent until the `op` message (the capture script, the binding,
//   the append to the authoring session);
// - frames: frames per second and KiB per frame while a page animates, at two viewport sizes.
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
const loadAtStart = os.loadavg()[0];

const site = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<!doctype html><html><head><style>@keyframes spin{to{transform:rotate(360deg)}} .spin{position:absolute;left:400px;top:40px;width:160px;height:160px;background:linear-gradient(90deg,#4f46e5,#f59e0b);animation:spin 1s linear infinite}</style></head>
<body style="margin:0"><button data-testid="go" style="position:absolute;left:40px;top:40px;width:200px;height:40px">Go</button><div class="spin"></div></body></html>`);
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const siteUrl = `http://127.0.0.1:${site.address().port}/`;

const pglite = await PGlite.create();
const engineStorage = createSqlStorage({ pglite });
const storage = createSqlServiceStorage(engineStorage);
await storage.init();
const studio = createStudioBrowser();
let service;
const server = await serveNodeHttp({ fetch: (r, e) => service.fetch(r, e), upgrade: (q, s, h) => service.upgrade(q, s, h) });
service = createHostedService({ storage, settings: { sessionSecrets: ['b'.repeat(40)], publicUrl: server.url, authIpLimitPerMinute: 100000 }, studio: { browser: studio, maxSessionsPerOrg: 4 }, web: false });

let cookie = '';
async function call(method, path, body) {
  const res = await fetch(server.url + path, { method, headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  if (set) cookie = set.split(';')[0];
  return res.json();
}
await call('POST', '/api/auth/signup', { email: 'bench@example.test', password: 'correct horse battery', org_name: 'Bench' });
const automation = (await call('POST', '/api/automations', { name: 'bench', site: siteUrl, task: 'bench' })).automation;

function open(width, height) {
  const started = performance.now();
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/authoring/${automation.id}/live?width=${width}&height=${height}`, { headers: { origin: server.url, cookie } });
  const waiters = [];
  const messages = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    m.at = performance.now();
    m.bytes = data.length;
    messages.push(m);
    for (const w of [...waiters]) if (w.pred(m)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(m));
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
| click -> captured \`op\` message (stored in the session), ${CLICKS} clicks | ${f(median(clickMs))} ms | ${f(percentile(clickMs, 95))} ms |

| viewport | frames/s (animated page, mouse moving) | KiB per frame (JSON message) |
|---|---|---|
${frames.map((x) => `| ${x.size} | ${f(x.fps)} | ${f(x.kib)} |`).join('\n')}

Load average at start ${loadAtStart.toFixed(1)}. Frames are acked only after the socket sent them, so the rate is what the
viewer's connection and the encoder sustain (loopback here).
`;
writeSection('studio', 'Studio live capture', body);
process.stdout.write(body);
