import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRunScope } from '/work/main/dist/index.js';
import { createPlaywrightExecutor } from '/work/main/dist/adapters/executor-playwright.js';
const SITE = '/work/main/test/fixtures/site/base/';
const server = createServer(async (req, res) => { const p = new URL(req.url, 'http://x').pathname; try { const b = await readFile(join(SITE, p.slice(1))); res.writeHead(200, {'content-type': {'.html':'text/html','.js':'text/javascript','.css':'text/css'}[extname(p)]}); res.end(b);} catch { res.writeHead(404).end(); } });
await new Promise(r => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;
const exec = createPlaywrightExecutor();
const t = Object.fromEntries(exec.tools.map(x => [x.contract.ref.split('/')[1], x]));
const OPS = [['navigate', { url: `${origin}/app.html` }], ['fill', { target: '#search', value: 'o' }], ['select', { target: '#category', value: 'books' }], ['extract', { target: '#results td.name', all: true }], ['click', { target: '#search' }], ['extract', { target: '#visits' }], ['drag', { source: '#task-report', target: '#done' }], ['upload', { target: '#attachment', files: ['test/fixtures/site/ops/files/report.csv'] }]];
const per = {};
for (let r = 0; r < 12; r++) {
  const scope = createRunScope();
  const ctx = { runId: 'r'+r, stepId: 's', attempt: 1, signal: new AbortController().signal, timeoutMs: 30000, cwd: '/work/main', effect(){}, warn(){}, scope, logger: {debug(){},info(){},warn(){}} };
  for (const [k, a] of OPS) { const t0 = performance.now(); await t[k].run(a, ctx); if (r>=2) (per[k] ??= []).push(performance.now()-t0); }
  await scope.dispose();
}
for (const [k, v] of Object.entries(per)) { v.sort((a,b)=>a-b); console.log(k, v[v.length>>1].toFixed(1)); }
await exec.dispose(); server.close();
const { chromium } = await import('playwright-core');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run'] });
const server2 = createServer(async (req, res) => { const p = new URL(req.url, 'http://x').pathname; try { const bb = await readFile(join(SITE, p.slice(1))); res.writeHead(200, {'content-type': {'.html':'text/html','.js':'text/javascript','.css':'text/css'}[extname(p)]}); res.end(bb);} catch { res.writeHead(404).end(); } });
await new Promise(r => server2.listen(0, '127.0.0.1', r));
const o2 = `http://127.0.0.1:${server2.address().port}`;
const raw = {};
for (let r = 0; r < 12; r++) {
  const c = await b.newContext({ acceptDownloads: false, serviceWorkers: 'block' }); const page = await c.newPage();
  const tm = async (k, f) => { const t0 = performance.now(); await f(); if (r>=2) (raw[k] ??= []).push(performance.now()-t0); };
  await tm('navigate', () => page.goto(o2 + '/app.html', {waitUntil: 'load'}));
  await tm('fill', () => page.locator('#search').fill('o'));
  await tm('select', () => page.locator('#category').selectOption('books'));
  await tm('extract', async () => { await page.locator('#results td.name').first().waitFor({state:'attached'}); await page.locator('#results td.name').evaluateAll(e => e.map(x => x.textContent)); });
  await tm('click', () => page.locator('#search').click());
  await tm('drag', () => page.locator('#task-report').dragTo(page.locator('#done')));
  await c.close();
}
for (const [k, v] of Object.entries(raw)) { v.sort((a,b)=>a-b); console.log('raw', k, v[v.length>>1].toFixed(1)); }
await b.close(); server2.close();
