// REST launcher benchmark (issues 6 and 12): sync runs of a pure 3-step flow through createLauncher()
// on the node-http adapter, side by side in one run with two reference servers. Each server runs in
// its own child process; autocannon (in this process) drives 50 connections for a few seconds per
// server after a short warm-up. The launcher uses memory storage (no disk I/O in the measurement).
//
// The floor server measures the floor of the design: Hono on @hono/node-server (the web-standard
// handler the launcher is) doing per request only what any journaled run must do: parse the body,
// seal the Run's 8 entries into a sha256 hash chain with flowctl's sealEntry, and answer the Run as
// JSON. No flow, tools, validation or storage. No launcher built on this stack can beat it. The bare
// node:http server answering a recorded Run is printed for reference.
//
// Targets (issue 12), relative to the floor measured in the same run, so machine load hits both
// alike: launcher throughput >= 70% of the floor's, launcher p99 <= 1.5x the floor's.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import os from 'node:os';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { GREET_FLOW, median, writeSection } from './results.mjs';

const CONNECTIONS = 50;
const WARMUP_S = 1;
// Short windows, many rounds, floor and launcher measured back to back in each: a load spike from
// elsewhere on a shared machine then hits a round's pair alike, and the median of the per-round
// ratios discards the rounds it did not.
const DURATION_S = 3;
const ROUNDS = 5;
const TARGET_OF_FLOOR = 0.7;
const TARGET_P99_OF_FLOOR = 1.5;
const BODY = JSON.stringify({ who: 'Ada', times: 2 });

/** The greet flow compiled, with memory storage behind an engine (every server below starts here). */
async function greetEngine() {
  const { builtinTools, compile, createEngine, createToolRegistry } = await import('../dist/index.js');
  const { createMemoryStorage } = await import('../dist/adapters/storage-memory.js');
  const tools = createToolRegistry(builtinTools());
  const r = compile(GREET_FLOW, { file: 'greet.yaml', tools });
  if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
  return { engine: createEngine({ storage: createMemoryStorage(), tools }), spec: r.spec };
}

/** One recorded Run of the greet flow: the answer the bare and floor servers give. */
async function recordedRun() {
  const { engine, spec } = await greetEngine();
  return engine.run({ spec }, JSON.parse(BODY));
}

async function launcherServer() {
  const { createLauncher } = await import('../dist/index.js');
  const { serveNodeHttp } = await import('../dist/adapters/node-http.js');
  const { engine, spec } = await greetEngine();
  const launcher = createLauncher({ engine, flows: [{ name: 'greet', spec }] });
  return serveNodeHttp(launcher, { port: 0 });
}

/** Hono plus the journal's irreducible work per request (see the top of this file). */
async function floorServer() {
  const { Hono } = await import('hono');
  const { getRequestListener } = await import('@hono/node-server');
  const { sealEntry } = await import('../dist/index.js');
  const recorded = await recordedRun();
  const drafts = recorded.journal.map(({ digest: _digest, at: _at, prev: _prev, ...rest }) => rest);
  const app = new Hono();
  app.post('/flows/:name/runs', async (c) => {
    await c.req.json();
    const journal = [];
    let prev = null;
    for (const draft of drafts) {
      const entry = sealEntry({ ...draft, at: new Date().toISOString(), prev });
      prev = entry.digest;
      journal.push(entry);
    }
    return c.json({ ...recorded, id: crypto.randomUUID(), journal });
  });
  const server = createServer(getRequestListener(app.fetch));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}` };
}

/** The bare server reads the body like the launcher and answers one recorded Run's JSON. */
async function bareServer() {
  const payload = JSON.stringify(await recordedRun());
  const server = createServer((req, res) => {
    let size = 0;
    req.on('data', (c) => (size += c.length));
    req.on('end', () => {
      JSON.parse(BODY);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}` };
}

// Child mode: start one server and print its URL.
if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  const s = kind === 'launcher' ? await launcherServer() : kind === 'floor' ? await floorServer() : await bareServer();
  process.stdout.write(`${s.url}\n`);
  process.on('SIGTERM', () => process.exit(0));
} else {
  await main();
}

function startChild(kind) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  return waitForLine(child, /http:\/\/\S+/, { what: `${kind} server` }).then(({ match }) => ({ child: child, url: match[0] }));
}

function load(url, duration) {
  return autocannon({
    url: `${url}/flows/greet/runs`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    connections: CONNECTIONS,
    duration,
  });
}

async function measure(kind) {
  const { child, url } = await startChild(kind);
  try {
    const probe = await fetch(`${url}/flows/greet/runs`, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
    const run = await probe.json();
    if (probe.status !== 200 || run.status !== 'succeeded') throw new Error(`${kind}: probe answered ${probe.status} ${run.status}`);
    await load(url, WARMUP_S);
    const r = await load(url, DURATION_S);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${kind}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
  } finally {
    child.kill('SIGTERM');
  }
}

async function main() {
  // Interleaved rounds, so a load spike on a shared machine hits every server alike.
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const bare = await measure('bare');
    // Alternate which of the pair goes first.
    const pair = i % 2 === 0 ? [await measure('floor'), await measure('launcher')] : [await measure('launcher'), await measure('floor')].reverse();
    rounds.push({ bare, floor: pair[0], launcher: pair[1] });
  }
  const ratio = median(rounds.map((r) => r.launcher.rps / r.bare.rps));
  const floorRatio = median(rounds.map((r) => r.floor.rps / r.bare.rps));
  const ofFloor = median(rounds.map((r) => r.launcher.rps / r.floor.rps));
  const p99 = median(rounds.map((r) => r.launcher.p99));
  const floorP99 = median(rounds.map((r) => r.floor.p99));
  const p99OfFloor = median(rounds.map((r) => r.launcher.p99 / r.floor.p99));
  const floorRps = median(rounds.map((r) => r.floor.rps));
  const ok = (b) => (b ? 'met' : 'NOT met');
  const row = (name, i, m) => `| ${i + 1} | ${name} | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.total} |`;
  const rows = rounds
    .flatMap((r, i) => [row('bare node:http', i, r.bare), row('floor: Hono + 8 sealed entries', i, r.floor), row('launcher (node-http)', i, r.launcher)])
    .join('\n');
  const body = `
Sync \`POST /flows/greet/runs\` of a pure 3-step flow (core/template, core/transform, core/assert)
through \`createLauncher()\` on the node-http adapter with **memory storage**, versus a bare
\`node:http\` server that reads the body and answers the same Run JSON. The **floor** server is Hono
on @hono/node-server doing per request only what any journaled run must do: parse the body, seal the
Run's 8 entries into a sha256 chain (flowctl's \`sealEntry\`) and answer the Run as JSON; no flow,
tools, validation or storage. autocannon, ${CONNECTIONS} connections, ${WARMUP_S} s warm-up then
${DURATION_S} s per server, each server in its own process, ${ROUNDS} interleaved rounds. Load average
at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')}.

| round | server | req/s (mean) | p50 ms | p99 ms | requests |
|---|---|---|---|---|---|
${rows}

- Throughput launcher/floor (median of rounds): **${(ofFloor * 100).toFixed(1)}%** (target >= ${TARGET_OF_FLOOR * 100}%: ${ok(ofFloor >= TARGET_OF_FLOOR)}); the floor: **${floorRps.toFixed(0)} req/s**
- p99 launcher/floor (median of rounds): **${p99OfFloor.toFixed(2)}x** (launcher ${p99} ms, floor ${floorP99} ms; target <= ${TARGET_P99_OF_FLOOR}x: ${ok(p99OfFloor <= TARGET_P99_OF_FLOOR)})
- For reference: floor/bare **${(floorRatio * 100).toFixed(1)}%**, launcher/bare **${(ratio * 100).toFixed(1)}%**.

Reading it: the floor row is the ceiling of this design on this machine (a launcher that journals
its runs and answers through a web-standard handler), measured in the same run as the launcher, so
the ratios hold on a loaded machine too. With ${CONNECTIONS} connections latency is about
${CONNECTIONS} / throughput (Little's law): the p99 ratio follows the throughput ratio. On a busy
machine (see the load average above) the launcher's ratio drops further than the floor's: it keeps
every run in memory storage, and its garbage collection competes for the same cores. Where a sync
run's time goes is in docs/rest.md, "Throughput".
`;
  writeSection('rest', 'REST launcher: sync runs vs bare node:http', body);
  process.stdout.write(body);
}
