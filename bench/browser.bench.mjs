// Browser benchmark (issue 4): the same 20-op flow run by the engine (createEngine + the Playwright
// executor) and by a handwritten playwright-core script, on the same page, the same Chromium and the
// same warm browser, interleaved in one process; median of RUNS each. Target: engine/script <= 1.10.
// Also: per-run start cost with a warm browser (new context + page) versus a cold launch.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { builtinTools, compileFlow, createEngine, createToolRegistry } from '../dist/index.js';
import { createPlaywrightExecutor, LAUNCH_FLAGS, resolveBrowser } from '../dist/adapters/executor-playwright.js';
import { createMemoryStorage } from '../dist/adapters/storage-memory.js';
import { median, percentile, writeSection } from './results.mjs';

const RUNS = 15;
const WARMUP = 2;
const START_RUNS = 10;
const TARGET = 1.1;
const SITE = new URL('../test/fixtures/site/base/', import.meta.url).pathname;
const UPLOAD = 'test/fixtures/site/ops/files/report.csv';

const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  try {
    const body = await readFile(join(SITE, path.replace(/^\/+/, '') || 'index.html'));
    res.writeHead(200, { 'content-type': { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' }[extname(path)] ?? 'text/plain' });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
const loadAtStart = os.loadavg()[0];
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

// The 20 ops, as (op, args) pairs: the engine runs them as browser steps, the script as Playwright calls.
const OPS = [
  ['navigate', { url: `${origin}/app.html` }],
  ['fill', { target: { css: '#search', fallbacks: [{ label: 'Search' }] }, value: 'o' }],
  ['select', { target: { css: '#category', fallbacks: [{ label: 'Category' }] }, value: 'books' }],
  ['extract', { target: '#results td.name', all: true }],
  ['fill', { target: '#search', value: 'go' }],
  ['select', { target: '#category', value: 'all' }],
  ['extract', { target: '#results td.name', all: true }],
  ['click', { target: { css: '#task-review', fallbacks: [{ text: 'Review code' }] } }],
  ['drag', { source: '#task-report', target: '#done' }],
  ['extract', { target: '#done li', all: true }],
  ['upload', { target: '#attachment', files: [UPLOAD] }],
  ['extract', { target: '#upload-result' }],
  ['fill', { target: '#search', value: '' }],
  ['select', { target: '#category', value: 'games' }],
  ['extract', { target: '#results td.name', all: true }],
  ['fill', { target: '#search', value: 'pin' }],
  ['extract', { target: '#results td.name', all: true }],
  ['click', { target: '#search' }],
  ['extract', { target: '#category', attribute: 'value' }],
  ['extract', { target: '#visits' }],
];

const flow = {
  name: 'bench-browser',
  steps: OPS.map(([kind, args], i) => ({ id: `${kind}_${i + 1}`, tool: `browser/${kind}@1`, args })),
  output: { last: '${steps.extract_20.output.value}', games: '${steps.extract_15.output.value}' },
};

const executor = createPlaywrightExecutor();
const tools = createToolRegistry(builtinTools(), executor.tools);
const compiled = compileFlow(flow, { file: 'bench-browser', tools });
if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
const engine = createEngine({ storage: createMemoryStorage(), tools, cwd: process.cwd() });

const css = (t) => (typeof t === 'string' ? t : t.css);
const uploadBytes = await readFile(UPLOAD);

// The script gets its own warm browser of the same Chromium and flags (both pay the same per-run context cost).
const { executablePath } = await resolveBrowser();
const browser = await chromium.launch({ executablePath, args: [...LAUNCH_FLAGS] });

async function script() {
  const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
  try {
    const page = await context.newPage();
    let out;
    for (const [kind, a] of OPS) {
      if (kind === 'navigate') await page.goto(a.url, { waitUntil: 'load' });
      else if (kind === 'fill') await page.locator(css(a.target)).fill(a.value);
      else if (kind === 'select') await page.locator(css(a.target)).selectOption(a.value);
      else if (kind === 'click') await page.locator(css(a.target)).click();
      else if (kind === 'drag') await page.locator(css(a.source)).dragTo(page.locator(css(a.target)));
      else if (kind === 'upload') await page.locator(css(a.target)).setInputFiles([{ name: 'report.csv', mimeType: 'text/csv', buffer: uploadBytes }]);
      else {
        const loc = page.locator(css(a.target));
        await (a.all ? loc.first() : loc).waitFor({ state: 'attached' });
        out = await loc.evaluateAll((els, attr) => els.map((el) => (attr ? (attr === 'value' ? el.value : el.getAttribute(attr)) : el.textContent.replace(/\s+/g, ' ').trim())), a.attribute);
      }
    }
    return out;
  } finally {
    await context.close();
  }
}

async function viaEngine() {
  const run = await engine.run({ spec: compiled.spec }, {});
  if (run.status !== 'succeeded') throw new Error(`engine run ${run.status}: ${JSON.stringify(run.journal.at(-1))}`);
  return run.output;
}

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

for (let i = 0; i < WARMUP; i++) {
  await viaEngine();
  await script();
}
const engineMs = [];
const scriptMs = [];
for (let i = 0; i < RUNS; i++) {
  // Interleaved, alternating who goes first, so drift on a shared machine hits both sides alike.
  if (i % 2 === 0) {
    engineMs.push(await time(viaEngine));
    scriptMs.push(await time(script));
  } else {
    scriptMs.push(await time(script));
    engineMs.push(await time(viaEngine));
  }
}

// Start cost: a new context + page on the warm browser, versus launching Chromium cold.
const warm = [];
const cold = [];
for (let i = 0; i < START_RUNS; i++) {
  warm.push(
    await time(async () => {
      const c = await browser.newContext();
      await c.newPage();
      await c.close();
    }),
  );
  cold.push(
    await time(async () => {
      const b = await chromium.launch({ executablePath, args: [...LAUNCH_FLAGS] });
      const c = await b.newContext();
      await c.newPage();
      await b.close();
    }),
  );
}

await engine.dispose();
await executor.dispose();
await browser.close();
server.close();

const fmt = (v) => v.toFixed(0);
const ratio = median(engineMs) / median(scriptMs);
const body = `20-op flow (navigate, fill, select, click, drag, upload, extract) on the fixture app page served from 127.0.0.1,
${RUNS} runs each after ${WARMUP} warm-up runs, interleaved in one process; both sides open a fresh context per run on a warm
${executablePath}. The engine run includes compile-free execution through createEngine (memory storage, journal, effects).
1-minute load average at start: ${loadAtStart.toFixed(1)} (other work shares the machine; the interleaving spreads it over both sides).
Target: engine/script at most ${TARGET.toFixed(2)}. Result: **${ratio.toFixed(3)}** (${ratio <= TARGET ? 'meets' : 'misses'} the target).

| Measure | median ms | p90 ms |
|---|---|---|
| engine (createEngine + executor-playwright) | ${fmt(median(engineMs))} | ${fmt(percentile(engineMs, 90))} |
| handwritten playwright-core script | ${fmt(median(scriptMs))} | ${fmt(percentile(scriptMs, 90))} |
| start: new context + page, warm browser | ${fmt(median(warm))} | ${fmt(percentile(warm, 90))} |
| start: cold launch + context + page | ${fmt(median(cold))} | ${fmt(percentile(cold, 90))} |`;

writeSection('browser', 'Browser: engine vs handwritten Playwright', body);
process.stderr.write(`${body}\n`);
process.exit(0);
