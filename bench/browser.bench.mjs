// Browser benchmark (issue 4): the same 20-op flow run by the engine (createEngine + the Playwright
// executor) and by a handwritten playwright-core script, on the same page, the same Chromium and the
// same warm browser, interleaved in one process; median of RUNS each. Target: engine/script <= 1.10.
// Also: per-run start cost with a warm browser (new context + page) versus a cold launch.
// Issue 12: locator drift (a drifted step costs at most 1.5x an undrifted one; a step where nothing
// matches fails within 3 s of the page settling), and a real single-page app not written here
// (Swagger UI, React, from the swagger-ui-dist package, on loopback): `flowctl run` as a whole process
// versus a handwritten playwright-core script as a whole process, one cold launch each. Target <= 1.10.
// Issue 20: real apps, the TodoMVC implementations of the todomvc npm package, the same way, per app
// (bench/browser-todomvc.mjs, its own section of RESULTS.md; BENCH_BROWSER=todomvc runs only that part).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { builtinTools, compileFlow, createEngine, createToolRegistry } from '../dist/index.js';
import { createPlaywrightExecutor, LAUNCH_FLAGS, resolveBrowser } from '../dist/adapters/executor-playwright.js';
import { createMemoryStorage } from '../dist/adapters/storage-memory.js';
import { median, percentile, writeSection } from './results.mjs';

// BENCH_QUICK=1: a few runs of each part, to try the benchmark out (results are still written).
const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = QUICK ? 3 : 15;
const WARMUP = QUICK ? 1 : 2;
const START_RUNS = QUICK ? 2 : 10;
const TARGET = 1.1;
if (process.env.BENCH_BROWSER === 'todomvc') {
  await (await import('./browser-todomvc.mjs')).run({ quick: QUICK });
  process.exit(0);
}
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
        out = await loc.evaluateAll(
          (els, attr) => els.map((el) => (attr ? (attr === 'value' ? el.value : el.getAttribute(attr)) : el.textContent.replace(/\s+/g, ' ').trim())),
          a.attribute,
        );
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

// Locator drift: the same fill step with its primary intact, drifted (a fallback matches), and
// missing (nothing matches), after a navigate that settles the page. Step durations from the journal.
const DRIFT_RUNS = QUICK ? 5 : 15;
const driftFlow = (target) => {
  const c = compileFlow(
    {
      name: 'bench-drift',
      steps: [
        { id: 'open', tool: 'browser/navigate@1', args: { url: `${origin}/app.html` } },
        { id: 'type', tool: 'browser/fill@1', args: { target, value: 'go' } },
      ],
    },
    { file: 'bench-drift', tools },
  );
  if (!c.ok) throw new Error(JSON.stringify(c.diagnostics));
  return c.spec;
};
const driftSpecs = {
  intact: driftFlow({ css: '#search', fallbacks: [{ label: 'Search' }] }),
  drifted: driftFlow({ css: '#search-renamed', fallbacks: [{ testid: 'search-renamed' }, { label: 'Search' }] }),
  missing: driftFlow({ css: '#search-renamed', fallbacks: [{ testid: 'search-renamed' }, { label: 'Search renamed' }] }),
};
const stepMs = async (spec, expected) => {
  const run = await engine.run({ spec }, {});
  if (run.status !== expected) throw new Error(`drift run ${run.status}: ${JSON.stringify(run.journal.at(-1))}`);
  const started = run.journal.find((e) => e.event === 'step_started' && e.step === 'type');
  const ended = run.journal.find((e) => (e.event === 'step_succeeded' || e.event === 'step_failed') && e.step === 'type');
  if (expected === 'failed' && ended.error.code !== 'locator_drift') throw new Error(`expected locator_drift, got ${ended.error.code}`);
  return Date.parse(ended.at) - Date.parse(started.at);
};
const drift = { intact: [], drifted: [], missing: [] };
for (let i = 0; i < DRIFT_RUNS; i++) {
  drift.intact.push(await stepMs(driftSpecs.intact, 'succeeded'));
  drift.drifted.push(await stepMs(driftSpecs.drifted, 'succeeded'));
  if (i < 5) drift.missing.push(await stepMs(driftSpecs.missing, 'failed'));
}

await engine.dispose();
await executor.dispose();
await browser.close();
server.close();

// A real single-page app: Swagger UI (React) from the swagger-ui-dist package, with a small pet API,
// all on 127.0.0.1. The same 13 operations by `flowctl run` (spawned, as a user runs it) and by a
// handwritten playwright-core script (spawned), one cold Chromium launch each, interleaved.
const APP_RUNS = QUICK ? 3 : 7;
const APP_TARGET = 1.1;
const SWAGGER = new URL('../node_modules/swagger-ui-dist/', import.meta.url).pathname;
const PET_API = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.0.0' },
  servers: [{ url: '/api' }],
  paths: {
    '/pets/{petId}': {
      get: {
        tags: ['pets'],
        operationId: 'getPet',
        summary: 'One pet',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 200: { description: 'the pet' } },
      },
    },
    '/pets': {
      get: {
        tags: ['pets'],
        operationId: 'findPets',
        summary: 'Pets by status',
        parameters: [{ name: 'status', in: 'query', required: true, schema: { type: 'string', enum: ['available', 'pending', 'sold'] } }],
        responses: { 200: { description: 'pets' } },
      },
    },
  },
};
const INITIALIZER = `window.onload = () => { window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', validatorUrl: null, deepLinking: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], plugins: [SwaggerUIBundle.plugins.DownloadUrl], layout: 'StandaloneLayout' }); };`;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png' };
const appServer = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/openapi.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PET_API));
  if (url.pathname === '/swagger-initializer.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(INITIALIZER);
  const pet = /^\/api\/pets\/(\d+)$/.exec(url.pathname);
  if (pet)
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: Number(pet[1]), name: `pet-${pet[1]}`, status: 'available' }));
  if (url.pathname === '/api/pets') {
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ id: 1, name: 'rex', status: url.searchParams.get('status') }]));
  }
  const file = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
  if (file.includes('..')) return res.writeHead(404).end();
  try {
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(await readFile(join(SWAGGER, file)));
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => appServer.listen(0, '127.0.0.1', r));
const appOrigin = `http://127.0.0.1:${appServer.address().port}`;
const GET = '#operations-pets-getPet';
const FIND = '#operations-pets-findPets';
const RESPONSE = '.live-responses-table .highlight-code code';
const APP_OPS = [
  ['navigate', { url: `${appOrigin}/` }],
  ['click', { target: `${GET} .opblock-summary-control` }],
  ['click', { target: `${GET} .try-out__btn` }],
  ['fill', { target: `${GET} input[placeholder="petId"]`, value: '7' }],
  ['click', { target: `${GET} .execute` }],
  ['extract', { target: `${GET} ${RESPONSE}` }],
  ['click', { target: `${FIND} .opblock-summary-control` }],
  ['click', { target: `${FIND} .try-out__btn` }],
  ['select', { target: `${FIND} select`, value: 'sold' }],
  ['click', { target: `${FIND} .execute` }],
  ['extract', { target: `${FIND} ${RESPONSE}` }],
  ['fill', { target: `${GET} input[placeholder="petId"]`, value: '12' }],
  ['click', { target: `${GET} .execute` }],
  ['extract', { target: `${GET} ${RESPONSE}` }],
];
const project = await mkdtemp(join(os.tmpdir(), 'flowctl-bench-app-'));
await mkdir(join(project, 'flows'));
const appSteps = APP_OPS.map(([kind, args], i) => ({ id: `${kind}_${i + 1}`, tool: `browser/${kind}@1`, args }));
const appFlow = {
  name: 'swagger-pets',
  steps: appSteps,
  output: { pet: '${steps.extract_6.output.value}', sold: '${steps.extract_11.output.value}', other: '${steps.extract_14.output.value}' },
};
// JSON is YAML: the flow file is written as JSON so it needs no YAML library here.
await writeFile(join(project, 'flows/swagger.yaml'), JSON.stringify(appFlow, null, 2));
const pw = new URL('../node_modules/playwright-core/index.mjs', import.meta.url).pathname;
const scriptFile = join(project, 'script.mjs');
// What a careful author writes: Playwright's own waits, and before each read a wait for the element it reads.
await writeFile(
  scriptFile,
  `import { chromium } from ${JSON.stringify(pw)};
const browser = await chromium.launch({ executablePath: ${JSON.stringify(executablePath)}, args: ${JSON.stringify([...LAUNCH_FLAGS])} });
const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
const page = await context.newPage();
const read = async (css) => { const loc = page.locator(css); await loc.waitFor({ state: 'attached' }); return (await loc.textContent()).replace(/\\s+/g, ' ').trim(); };
await page.goto(${JSON.stringify(`${appOrigin}/`)}, { waitUntil: 'load' });
await page.locator(${JSON.stringify(`${GET} .opblock-summary-control`)}).click();
await page.locator(${JSON.stringify(`${GET} .try-out__btn`)}).click();
await page.locator(${JSON.stringify(`${GET} input[placeholder="petId"]`)}).fill('7');
await page.locator(${JSON.stringify(`${GET} .execute`)}).click();
const pet = await read(${JSON.stringify(`${GET} ${RESPONSE}`)});
await page.locator(${JSON.stringify(`${FIND} .opblock-summary-control`)}).click();
await page.locator(${JSON.stringify(`${FIND} .try-out__btn`)}).click();
await page.locator(${JSON.stringify(`${FIND} select`)}).selectOption('sold');
await page.locator(${JSON.stringify(`${FIND} .execute`)}).click();
const sold = await read(${JSON.stringify(`${FIND} ${RESPONSE}`)});
await page.locator(${JSON.stringify(`${GET} input[placeholder="petId"]`)}).fill('12');
await page.locator(${JSON.stringify(`${GET} .execute`)}).click();
// The response of the first execute is still shown: wait for the new one, as the author knows it.
await page.locator(${JSON.stringify(`${GET} ${RESPONSE}`)}, { hasText: '"id": 12' }).waitFor();
const other = await read(${JSON.stringify(`${GET} ${RESPONSE}`)});
await browser.close();
process.stdout.write(JSON.stringify({ pet, sold, other }));
`,
);
const bin = new URL('../bin/flowctl.mjs', import.meta.url).pathname;
const spawnTimed = (args) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${args.join(' ')}: exit ${code}\n${err}`))));
  });
const viaCli = async () => {
  const r = await spawnTimed([bin, 'run', 'flows/swagger.yaml', '--yes', '--json']);
  const run = JSON.parse(r.out);
  // The run itself, from its journal: run_started to run_finished (the browser launch is in its first step).
  const inRun = Date.parse(run.journal.at(-1).at) - Date.parse(run.journal[0].at);
  return { ms: r.ms, output: run.output, inRun };
};
const viaScript = async () => {
  const r = await spawnTimed([scriptFile]);
  return { ms: r.ms, output: JSON.parse(r.out) };
};
const sorted = (o) => JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));
const appExpected = sorted((await viaScript()).output);
const checkSame = (o) => {
  if (sorted(o) !== appExpected) throw new Error(`outputs differ: ${sorted(o)} vs ${appExpected}`);
};
checkSame((await viaCli()).output);
const cliMs = [];
const cliRunMs = [];
const appScriptMs = [];
for (let i = 0; i < APP_RUNS; i++) {
  const pair = i % 2 === 0 ? [viaCli, viaScript] : [viaScript, viaCli];
  for (const fn of pair) {
    const r = await fn();
    checkSame(r.output);
    (fn === viaCli ? cliMs : appScriptMs).push(r.ms);
    if (fn === viaCli) cliRunMs.push(r.inRun);
  }
}
appServer.close();

const fmt = (v) => v.toFixed(0);
const ratio = median(engineMs) / median(scriptMs);
let body = `20-op flow (navigate, fill, select, click, drag, upload, extract) on the fixture app page served from 127.0.0.1,
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

const driftRatio = median(drift.drifted) / median(drift.intact);
const missingMax = Math.max(...drift.missing);
const appRatio = median(cliMs) / median(appScriptMs);
const loadAtEnd = os.loadavg()[0];
body += `

### Locator drift

One \`fill\` step after a \`navigate\` on the same page (step time from the journal, ${DRIFT_RUNS} runs each, 5 for the
missing target): primary intact; primary drifted (\`css=#search-renamed\` matches nothing, \`testid\` nothing, \`label="Search"\` one);
nothing matches (fails with \`locator_drift\` after the 2,000 ms appear window, measured from the step's start, which the settled page precedes).
Targets: drifted/intact at most 1.50, nothing-matches at most 3,000 ms after the page settled.
Result: drifted/intact **${driftRatio.toFixed(2)}** (${driftRatio <= 1.5 ? 'meets' : 'misses'}), nothing matches: slowest **${fmt(missingMax)} ms** (${missingMax <= 3000 ? 'meets' : 'misses'}).

| Step | median ms | p90 ms |
|---|---|---|
| fill, primary intact | ${fmt(median(drift.intact))} | ${fmt(percentile(drift.intact, 90))} |
| fill, primary drifted, fallback taken | ${fmt(median(drift.drifted))} | ${fmt(percentile(drift.drifted, 90))} |
| fill, nothing matches (locator_drift) | ${fmt(median(drift.missing))} | ${fmt(missingMax)} (max) |

### A real single-page app: Swagger UI

Swagger UI ${JSON.parse(await readFile(join(SWAGGER, 'package.json'), 'utf8')).version} (React; the prebuilt \`swagger-ui-dist\` package, not written here) with a two-operation pet API,
served from 127.0.0.1. ${APP_OPS.length} operations (navigate; expand, try out, fill, execute, read a live response; the same with a
\`select\`; fill and execute again and read the new response): \`flowctl run flows/swagger.yaml --yes --json\` spawned as a user runs it,
versus a handwritten playwright-core script (Playwright's own waits, and a wait for the element before each read) spawned with
\`node\`. Whole process each, one cold Chromium launch each, ${APP_RUNS} runs each, interleaved; both outputs checked equal.
1-minute load average at the end: ${loadAtEnd.toFixed(1)}.
Target: CLI/script at most ${APP_TARGET.toFixed(2)}. Result: **${appRatio.toFixed(3)}** (${appRatio <= APP_TARGET ? 'meets' : 'misses'} the target).

| Whole process | median ms | p90 ms |
|---|---|---|
| \`flowctl run\` (engine, file storage, journal) | ${fmt(median(cliMs))} | ${fmt(percentile(cliMs, 90))} |
| handwritten playwright-core script | ${fmt(median(appScriptMs))} | ${fmt(percentile(appScriptMs, 90))} |
| of \`flowctl run\`: the run itself (journal run_started to run_finished, launch included) | ${fmt(median(cliRunMs))} | ${fmt(percentile(cliRunMs, 90))} |

The run itself (every step, the cold launch included) against the script's whole process: **${(median(cliRunMs) / median(appScriptMs)).toFixed(3)}**;
the rest of \`flowctl run\` is the CLI's own start (loading, compiling the flow, opening the project) and exit.`;

writeSection('browser', 'Browser: engine vs handwritten Playwright', body);
process.stderr.write(`${body}\n`);
await (await import('./browser-todomvc.mjs')).run({ quick: QUICK });
process.exit(0);
