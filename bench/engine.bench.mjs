// Engine benchmarks (docs/journal.md): per-step overhead of a 1,000-step pure flow on memory storage,
// and hermetic `verify` replay of a 1,000-step journal. Targets: < 0.2 ms per step, < 100 ms per
// verify. Imports the built package (npm run bench builds first). Writes bench/RESULTS.md#engine.
//
// BENCH_BASELINE=<another build's dist/> (e.g. of an older commit, in a `git worktree`) also replays
// the same journal with that build, round for round interleaved with this one, so both see the same
// machine load; the table then shows both, and the bench fails if the two builds' replays do not
// give the same entry digests. BENCH_DIST=<dist/> measures another build than ../dist.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, percentile, writeSection } from './results.mjs';

const distUrl = (dir) => pathToFileURL(`${resolve(dir)}/`).href;
async function loadBuild(dir) {
  const [core, memory, fs] = await Promise.all(
    ['index.js', 'adapters/storage-memory.js', 'adapters/storage-fs.js'].map((f) => import(new URL(f, distUrl(dir)).href)),
  );
  return { ...core, createMemoryStorage: memory.createMemoryStorage, createFsStorage: fs.createFsStorage };
}
const current = await loadBuild(process.env.BENCH_DIST ?? new URL('../dist', import.meta.url).pathname);
const baseline = process.env.BENCH_BASELINE ? await loadBuild(process.env.BENCH_BASELINE) : undefined;
const { contractDigest, createEngine, createToolRegistry, defineTool, createMemoryStorage, createFsStorage } = current;

const STEPS = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

const add = defineTool(
  {
    ref: 'bench/add',
    version: '1.0.0',
    description: 'n + 1',
    input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    output_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    capabilities: [],
  },
  async ({ n }) => ({ n: n + 1 }),
);
const tools = createToolRegistry([add]);
const pin = { ref: 'bench/add', version: '1.0.0', contract_digest: contractDigest(add.contract) };

function spec(steps) {
  return {
    flowspec: 1,
    name: `bench-${steps}`,
    inputs: { start: { type: 'integer', required: true, secret: false, schema: { type: 'integer' } } },
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i}`,
      tool: pin,
      capabilities: [],
      args: { n: i === 0 ? '${inputs.start}' : `\${steps.s${i - 1}.output.n}` },
      retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 1 },
      timeout_ms: 10_000,
    })),
    output: { n: `\${steps.s${steps - 1}.output.n}` },
  };
}

// Wall time and this process's CPU time (user + system): on a shared, loaded machine the CPU time is
// what the engine itself costs, the wall time also includes waiting for a core.
async function time(fn) {
  globalThis.gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000, value };
}

const big = spec(STEPS);

// The tool's own cost (input and output schema checks inside defineTool included), to separate it
// from the engine's overhead.
const toolOnly = [];
const toolOnlyCpu = [];
for (let r = 0; r < ROUNDS + 2; r++) {
  const { ms, cpu } = await time(async () => {
    let n = 0;
    for (let i = 0; i < STEPS; i++) n = (await add.run({ n }, {})).n;
  });
  if (r >= 2) {
    toolOnly.push(ms);
    toolOnlyCpu.push(cpu);
  }
}

const load = loadavg()[0];
const runMs = [];
const runCpu = [];
const replayMs = [];
const replayCpu = [];
const hermeticMs = [];
const baseMs = [];
const baseCpu = [];
let journalLength = 0;
const chainOf = (run) => run.journal.map((e) => e.digest).join(' ');
for (let r = 0; r < ROUNDS + 2; r++) {
  const engine = createEngine({ storage: createMemoryStorage(), tools });
  const run = await time(() => engine.run({ spec: big }, { start: 0 }));
  if (run.value.status !== 'succeeded' || run.value.output.n !== STEPS) throw new Error('bench run failed');
  journalLength = run.value.journal.length;
  // A fresh engine without tools replays from the journal alone, as a fixture replay does.
  const replayer = createEngine({ storage: createMemoryStorage(), tools: createToolRegistry() });
  // The baseline first in even rounds, second in odd ones: neither always gets the warmer machine.
  const replayBaseline = async () => {
    if (!baseline) return undefined;
    const other = baseline.createEngine({ storage: baseline.createMemoryStorage(), tools: baseline.createToolRegistry() });
    const measured = await time(() => other.replay({ journal: run.value.journal }, { mode: 'verify', spec: big }));
    await other.dispose();
    if (measured.value.status !== 'succeeded') throw new Error('bench verify (baseline) failed');
    return measured;
  };
  const before = r % 2 === 0 ? await replayBaseline() : undefined;
  const verify = await time(() => replayer.replay({ journal: run.value.journal }, { mode: 'verify', spec: big }));
  if (verify.value.status !== 'succeeded') throw new Error('bench verify failed');
  const base = before ?? (await replayBaseline());
  if (base && chainOf(base.value) !== chainOf(verify.value)) throw new Error('the baseline build and this one give different replay entry digests');
  const hermetic = await time(() => replayer.replay({ journal: run.value.journal }, { spec: big }));
  await engine.dispose();
  await replayer.dispose();
  if (r >= 2 && base) {
    baseMs.push(base.ms);
    baseCpu.push(base.cpu);
  }
  if (r >= 2) {
    runMs.push(run.ms);
    runCpu.push(run.cpu);
    replayMs.push(verify.ms);
    replayCpu.push(verify.cpu);
    hermeticMs.push(hermetic.ms);
  }
}

// For reference: the same engine on storage-fs (fsync per journal append), 200 steps.
const FS_STEPS = 200;
const fsMs = [];
const dir = await mkdtemp(join(tmpdir(), 'flowctl-bench-'));
try {
  const fsSpec = spec(FS_STEPS);
  for (let r = 0; r < 3; r++) {
    const engine = createEngine({ storage: createFsStorage({ dir }), tools });
    const run = await time(() => engine.run({ spec: fsSpec }, { start: 0 }));
    await engine.dispose();
    fsMs.push(run.ms);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const f = (v) => v.toFixed(3);
const verdict = (v, limit) => (v < limit ? 'met' : 'missed');
const overhead = (median(runMs) - median(toolOnly)) / STEPS;
const overheadCpu = (median(runCpu) - median(toolOnlyCpu)) / STEPS;
const verify = median(replayMs);
const verifyCpu = median(replayCpu);
const rows = [
  ['Run, 1,000-step pure flow, memory storage: wall time per step', `${f(median(runMs) / STEPS)} ms`, '', ''],
  ['Engine overhead per step, wall (run minus the tool calls alone)', `${f(overhead)} ms`, '< 0.2 ms', verdict(overhead, 0.2)],
  ['Engine overhead per step, CPU time', `${f(overheadCpu)} ms`, '< 0.2 ms', verdict(overheadCpu, 0.2)],
  [`Verify replay of a 1,000-step journal (${journalLength} entries), wall, median`, `${verify.toFixed(1)} ms`, '< 100 ms', verdict(verify, 100)],
  ['Verify replay, CPU time, median', `${verifyCpu.toFixed(1)} ms`, '< 100 ms', verdict(verifyCpu, 100)],
  ['Verify replay, wall, p90', `${percentile(replayMs, 90).toFixed(1)} ms`, '', ''],
  ['Hermetic replay of the same journal, wall, median', `${median(hermeticMs).toFixed(1)} ms`, '', ''],
  ...(baseline
    ? [
        [
          `Baseline build (${process.env.BENCH_BASELINE_LABEL ?? 'BENCH_BASELINE'}): verify replay, wall, median (same rounds, interleaved)`,
          `${median(baseMs).toFixed(1)} ms`,
          '< 100 ms',
          verdict(median(baseMs), 100),
        ],
        ['Baseline build: verify replay, CPU time, median', `${median(baseCpu).toFixed(1)} ms`, '< 100 ms', verdict(median(baseCpu), 100)],
      ]
    : []),
  [`Run, ${FS_STEPS}-step flow, storage-fs (fsync per append): wall per step`, `${f(median(fsMs) / FS_STEPS)} ms`, '', ''],
];
const body = [
  `Median of ${ROUNDS} rounds after 2 warm-up rounds; \`bench/engine.bench.mjs\`, built package, one process;`,
  `1-minute load average ${load.toFixed(1)} on ${cpus().length} cores when it started (CPU time is the engine's own cost; wall time adds waiting for a core).`,
  'A step journals two entries (step_started, step_succeeded), each masked, sealed (canonical JSON + sha256)',
  'and appended; input and output are checked against the contract schemas; every returned Run is parsed by the',
  'strict Run schema.',
  ...(baseline
    ? [
        `Baseline: ${process.env.BENCH_BASELINE_LABEL ?? process.env.BENCH_BASELINE}, replaying the same journals in the same process, round for round`,
        'interleaved with this build (which goes first alternates); both builds gave the same entry digests in every round.',
      ]
    : []),
  '',
  '| Measure | Result | Target | |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
writeSection('engine', 'Engine: per-step overhead and verify replay', body);
process.stderr.write(`${body}\n`);
