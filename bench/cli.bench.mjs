// Cold start of the CLI: `flowctl --help` and `flowctl run hello` (a pure flow, in a temp project
// after `flowctl init`), each a fresh `node bin/flowctl.mjs` process. Median of RUNS spawns each.
// Targets: --help under 150 ms, run hello under 400 ms. Section <!-- bench:cli --> of bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median, percentile, writeSection } from './results.mjs';

const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);
const BIN = process.env.FLOWCTL_TEST_BIN ?? resolve(import.meta.dirname, '../bin/flowctl.mjs');
const dir = mkdtempSync(join(tmpdir(), 'flowctl-bench-cli-'));

function spawnMs(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`flowctl ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

try {
  spawnMs(['init']);
  // One warm-up each so the OS file cache, not the first disk read, is what we measure.
  spawnMs(['--help']);
  if (!spawnMs(['run', 'hello']).stdout.includes('Hello')) throw new Error('run hello printed no greeting');
  const bare = [];
  const help = [];
  const run = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
    bare.push(performance.now() - t0);
    help.push(spawnMs(['--help']).ms);
    run.push(spawnMs(['run', 'hello']).ms);
  }
  const base = median(bare);
  const row = (name, xs, target) =>
    `| ${name} | ${xs.length} | ${median(xs).toFixed(1)} | ${percentile(xs, 90).toFixed(1)} | ${target ? (median(xs) - base).toFixed(1) : '-'} | ${target ?? '-'} | ${target ? (median(xs) < target ? 'met' : 'missed') : '-'} |`;
  const body = [
    `Each sample is a fresh \`node bin/flowctl.mjs\` process (spawn to exit), interleaved, ${RUNS} samples each after one warm-up. \`run hello\` is the starter flow of \`flowctl init\` (pure: one core/template step), its run stored in .flowctl/ of a temp project. "over node" is the median minus the median of a bare \`node -e ""\` measured in the same loop, i.e. flowctl's own cost. Load average during the run: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (the machine is shared; wall-clock numbers rise with load).`,
    '',
    '| command | samples | median ms | p90 ms | over node ms | target ms | |',
    '|---|---|---|---|---|---|---|',
    row('`node -e ""` (Node itself, for reference)', bare),
    row('`flowctl --help`', help, 150),
    row('`flowctl run hello`', run, 400),
  ].join('\n');
  writeSection('cli', 'CLI cold start', body);
  process.stdout.write(`${body}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
