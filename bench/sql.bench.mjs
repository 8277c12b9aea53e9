// SQL storage benchmark (issue 8, docs/storage-sql.md): runs per second of a pure 3-step flow through
// createEngine on memory, PGlite (data folder) and Postgres storage, interleaved in one process, one
// run at a time and at several concurrencies (BENCH_CONCURRENCY, default 1,8,32); and
// cross-process watch latency on Postgres (append in one process -> entry yielded by a watch in
// another), p50 and p99, target p50 < 50 ms. Postgres comes from TEST_DATABASE_URL or DATABASE_URL
// (a schema of its own, dropped after). Imports the built package. Writes bench/RESULTS.md#sql.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { contractDigest, createEngine, createToolRegistry, defineTool, digestOf, sealEntry } from '../dist/index.js';
import { createMemoryStorage } from '../dist/adapters/storage-memory.js';
import { createSqlStorage } from '../dist/adapters/storage-sql.js';
import { sql } from 'kysely';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { median, percentile, writeSection } from './results.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS_PER_ROUND = Number(process.env.BENCH_RUNS ?? 100);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,8,32').split(',').map(Number);
if (!CONCURRENCIES.every((c) => Number.isInteger(c) && c > 0)) throw new Error('BENCH_CONCURRENCY: comma-separated positive integers');
// BENCH_STORAGES=postgres (or memory,pglite) measures only those, e.g. while tuning one of them.
const ONLY = process.env.BENCH_STORAGES?.split(',');
const WATCH_APPENDS = Number(process.env.BENCH_WATCH_APPENDS ?? 200);
const WATCH_GAP_MS = 10;
const url = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
const schema = `flowctl_bench_${process.pid}`;

const upper = defineTool(
  {
    ref: 'bench/upper',
    version: '1.0.0',
    description: 'Upper-cases a string.',
    input_schema: { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] },
    output_schema: { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] },
    capabilities: [],
  },
  async ({ s }) => ({ s: s.toUpperCase() }),
);
const tools = createToolRegistry([upper]);
const pin = { ref: 'bench/upper', version: '1.0.0', contract_digest: contractDigest(upper.contract) };
const step = (id, s) => ({ id, tool: pin, capabilities: [], args: { s }, retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 1 }, timeout_ms: 10_000 });
const spec = {
  flowspec: 1,
  name: 'bench-sql',
  inputs: { word: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
  steps: [step('a', '${inputs.word}'), step('b', '${steps.a.output.s}-b'), step('c', '${steps.b.output.s}-c')],
  output: { s: '${steps.c.output.s}' },
};

async function timed(engine, n, concurrency) {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const run = await engine.run({ spec }, { word: 'x' });
      if (run.status !== 'succeeded') throw new Error(`bench run failed: ${JSON.stringify(run)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return n / ((performance.now() - t0) / 1000);
}

const dir = await mkdtemp(join(tmpdir(), 'flowctl-bench-sql-'));
let storages = [
  { key: 'memory', name: 'memory', make: () => createMemoryStorage() },
  { key: 'pglite', name: 'PGlite (data folder)', make: () => createSqlStorage({ pglite: { dataDir: join(dir, 'pglite') } }) },
];
if (url) {
  storages.push({ key: 'postgres', name: 'Postgres (local, default pool)', make: () => createSqlStorage({ databaseUrl: url, schema }) });
  // The same without group commit: every append and create is its own statement (docs/storage-sql.md).
  storages.push({
    key: 'postgres-single',
    name: 'Postgres, `groupCommit: false`',
    make: () => createSqlStorage({ databaseUrl: url, schema: `${schema}_single`, groupCommit: false }),
  });
} else process.stderr.write('[bench:sql] no TEST_DATABASE_URL or DATABASE_URL: Postgres rows skipped\n');
if (ONLY) storages = storages.filter((s) => ONLY.includes(s.key));

const load = loadavg()[0];
const engineStorage = new Map();
let pgSettings = 'settings not read';
const results = [];
try {
  for (const s of storages) {
    const storage = s.make();
    const engine = createEngine({ storage, tools });
    engineStorage.set(engine, storage);
    await timed(engine, 10, 1); // warm-up: opens the database, applies migrations, JITs the path
    if (s.key.startsWith('postgres')) {
      const { rows } = await sql`select current_setting('synchronous_commit') as sc, current_setting('fsync') as fs`.execute(engineStorage.get(engine).db);
      pgSettings = `synchronous_commit ${rows[0].sc}, fsync ${rows[0].fs}`;
    }
    results.push({ ...s, engine, rates: CONCURRENCIES.map(() => []) });
  }
  // Interleaved rounds: every storage sees the same machine load.
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of results) {
      for (const [i, c] of CONCURRENCIES.entries()) s.rates[i].push(await timed(s.engine, Math.max(RUNS_PER_ROUND, 4 * c), c));
    }
  }
} finally {
  for (const s of results) {
    const storage = engineStorage.get(s.engine);
    if (s.key.startsWith('postgres')) await storage.db.schema.dropSchema(storage.schema).ifExists().cascade().execute();
    await s.engine.dispose();
  }
}

let watchLine = 'Cross-process watch latency on Postgres: not measured (no TEST_DATABASE_URL or DATABASE_URL).';
if (url && (!ONLY || ONLY.includes('postgres'))) {
  const latencies = await watchLatency();
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  watchLine = [
    `Cross-process watch latency on Postgres, ${latencies.length} appends ${WATCH_GAP_MS} ms apart`,
    '(writer process: wall clock just before `journal.append`; watcher process: when `journal.watch` yields the entry):',
    '',
    '| p50 | p99 | max | Target |',
    '|---|---|---|---|',
    `| ${p50.toFixed(2)} ms | ${p99.toFixed(2)} ms | ${Math.max(...latencies).toFixed(2)} ms | p50 < 50 ms: ${p50 < 50 ? 'met' : 'missed'} |`,
  ].join('\n');
}
await rm(dir, { recursive: true, force: true });

// A cell: runs per second, and the mean time one run took from start to finish (concurrency / rate).
const cell = (rates, c) => {
  const rate = median(rates);
  return `${rate.toFixed(0)} (${((1000 * c) / rate).toFixed(2)} ms)`;
};
const label = (c) => (c === 1 ? 'one at a time' : `${c} concurrent`);
const body = [
  `A pure 3-step flow (\`bench/upper\` three times; 8 journal entries per run) through \`createEngine\`, median of ${ROUNDS} interleaved rounds`,
  `of ${RUNS_PER_ROUND} runs (at least 4 per concurrent caller) after a 10-run warm-up; \`bench/sql.bench.mjs\`, built package, one process.`,
  `Each cell is runs per second, and in brackets the mean time of one run from start to finish.`,
  `Postgres: ${url ? `the local server of TEST_DATABASE_URL / DATABASE_URL (${pgSettings})` : 'not measured'}.`,
  `1-minute load average ${load.toFixed(1)} on ${cpus().length} cores when it started.`,
  '',
  `| Storage | ${CONCURRENCIES.map((c) => `Runs/s, ${label(c)}`).join(' | ')} |`,
  `|---|${CONCURRENCIES.map(() => '---|').join('')}`,
  ...results.map((s) => `| ${s.name} | ${CONCURRENCIES.map((c, i) => cell(s.rates[i], c)).join(' | ')} |`),
  '',
  watchLine,
].join('\n');
// A partial run (some storages, other concurrencies) prints its table but leaves RESULTS.md alone.
if (!ONLY && !process.env.BENCH_CONCURRENCY) writeSection('sql', 'SQL storage: runs per second and cross-process watch latency', body);
process.stderr.write(`${body}\n`);

/** A writer child process appends to one run while this process watches it. */
async function watchLatency() {
  const storage = createSqlStorage({ databaseUrl: url, schema });
  const runId = crypto.randomUUID();
  const flowDigest = digestOf({ bench: 'watch' });
  await storage.runs.create({ id: runId, flow_digest: flowDigest, flow_name: 'watch', status: 'running', started_at: new Date().toISOString() });
  const first = sealEntry({
    at: new Date().toISOString(),
    flow_digest: flowDigest,
    inputs_digest: flowDigest,
    seq: 0,
    prev: null,
    event: 'run_started',
    flow_name: 'watch',
    inputs: {},
    contracts: [],
  });
  await storage.journal.append(runId, first);
  const writer = join(dir, 'watch-writer.mjs');
  await writeFile(
    writer,
    `import { createSqlStorage } from ${JSON.stringify(new URL('../dist/adapters/storage-sql.js', import.meta.url).href)};
import { sealEntry } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
const [url, schema, runId, flowDigest, prev0, count, gap] = process.argv.slice(2);
const storage = createSqlStorage({ databaseUrl: url, schema, poolSize: 1 });
await storage.init();
process.stdout.write('ready\\n');
await new Promise((r) => process.stdin.once('data', r));
let prev = prev0;
for (let seq = 1; seq <= Number(count); seq++) {
  const last = seq === Number(count);
  const base = { at: new Date().toISOString(), flow_digest: flowDigest, inputs_digest: flowDigest, seq, prev };
  const sent = String(performance.timeOrigin + performance.now());
  const entry = last
    ? sealEntry({ ...base, event: 'run_finished', status: 'succeeded', output: { sent } })
    : sealEntry({ ...base, event: 'step_skipped', step: 's' + seq, reason: sent });
  await storage.journal.append(runId, entry);
  prev = entry.digest;
  await new Promise((r) => setTimeout(r, Number(gap)));
}
await storage.dispose();
process.stdin.destroy();
`,
  );
  const child = spawn(process.execPath, [writer, url, schema, runId, flowDigest, first.digest, String(WATCH_APPENDS), String(WATCH_GAP_MS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const kill = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const latencies = [];
  try {
    await waitForLine(child, /^ready$/, { what: 'the watch writer' });
    const signal = AbortSignal.timeout(120_000);
    let started = false;
    for await (const entry of storage.journal.watch(runId, { signal })) {
      const now = performance.timeOrigin + performance.now();
      if (entry.seq === 0) {
        // The watch has subscribed and read: every append from here on is a live notification.
        started = true;
        child.stdin.write('go\n');
        continue;
      }
      const sent = Number(entry.event === 'run_finished' ? entry.output.sent : entry.reason);
      latencies.push(now - sent);
    }
    if (!started || latencies.length !== WATCH_APPENDS) throw new Error(`watch saw ${latencies.length} of ${WATCH_APPENDS} appends`);
    await exited;
  } finally {
    clearTimeout(kill);
    if (child.exitCode === null) child.kill('SIGKILL');
    await storage.db.schema.dropSchema(schema).ifExists().cascade().execute();
    await storage.dispose();
  }
  return latencies;
}
