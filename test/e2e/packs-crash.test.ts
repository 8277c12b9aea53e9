import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical.js';
import { toExport } from '../../src/packs/export-file.js';
import { DRAFT_FORMAT, type PackDraft } from '../../src/packs/types.js';
import { verifyRegistry } from '../../src/packs/verify.js';
import { tempProject } from '../helpers/cli.js';
import { below, prng, testSeed } from '../helpers/seeded.js';
import { build, greetingSpec } from '../unit/packs/fixtures.js';

const DIST = pathToFileURL(resolve(import.meta.dirname, '../../dist/packs.js')).href;
const PACKS = 30;
const FLOWS_PER_PACK = 12;
const KILLS = 24;
// Kill points are random but seeded: a failure replays from the seed (FLOWCTL_TEST_SEED replaces it).
const SEED = testSeed(0x9ac4_c0de);

/**
 * A child that publishes every exported pack in turn through the built library, printing "ready"
 * first and "publishing <i>" before pack i (so packs before i are complete when that line is printed).
 */
const CHILD = `
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
const { fromExport, publishPack } = await import(process.argv[2]);
const [, , , dir, registry] = process.argv;
process.stdout.write('ready\\n');
for (const [i, file] of readdirSync(dir).sort().entries()) {
  process.stdout.write('publishing ' + i + '\\n');
  await publishPack(registry, fromExport(readFileSync(join(dir, file), 'utf8'), file));
}
process.stdout.write('done\\n');
`;

function draft(i: number): PackDraft {
  const flows = Array.from({ length: FLOWS_PER_PACK }, (_, j) => {
    const spec = greetingSpec(`f${j}`, `Hello ${i}.${j}`);
    return { name: `f${j}`, file: `out/f${j}.flowspec.json`, source_kind: 'flowspec' as const, source: `${canonicalJson(spec)}\n` };
  });
  return { format: DRAFT_FORMAT, name: `crash-${String(i).padStart(2, '0')}`, version: '1.0.0', flows, tools: [] };
}

/** Where to kill a child: `delayMs` after it says it starts publishing pack `pack`. */
interface KillPoint {
  pack: number;
  delayMs: number;
}

/**
 * Run the child; kill it with SIGKILL at `at` (or let it finish when undefined). The kill follows an
 * event of the child (it started pack `at.pack`), not a time since its start, so packs before that
 * one are always complete whatever the machine's speed; the seeded delay spreads where in that pack's
 * writes (or a later one's) the kill lands.
 */
function runChild(script: string, exports: string, registry: string, at?: KillPoint): Promise<{ finished: boolean }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [script, DIST, exports, registry], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    // A cap on a hung child (its own finish takes seconds), not a timing assertion.
    const bound = setTimeout(() => child.kill('SIGKILL'), 100_000);
    let armed = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (at !== undefined && !armed && out.includes(`\npublishing ${at.pack}\n`)) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), at.delayMs);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      if (signal === null && code !== 0) reject(new Error(`child failed (${code}): ${err}`));
      else resolvePromise({ finished: out.includes('done\n') });
    });
  });
}

describe('publish killed with SIGKILL', () => {
  it(`leaves a registry that verifies, at ${KILLS} seeded random points`, async () => {
    const root = await tempProject('flowctl-crash-');
    const exports = join(root, 'exports');
    const registry = join(root, 'registry');
    await mkdir(exports);
    for (let i = 0; i < PACKS; i++) {
      await writeFile(join(exports, `${String(i).padStart(2, '0')}.json`), JSON.stringify(toExport(await build(draft(i)))));
    }
    const script = join(root, 'child.mjs');
    await writeFile(script, CHILD);

    const next = prng(SEED);
    const landed: number[] = [];
    let tempFilesSeen = 0;
    for (let k = 0; k < KILLS; k++) {
      // A fresh registry every other round, killed in its first packs, so early kill points (first
      // blobs, first index) are hit again and again; the rounds in between kill anywhere.
      const fresh = k % 2 === 0;
      const reg = fresh ? join(registry, `r${k}`) : join(registry, `r${k - 1}`);
      const at = { pack: fresh ? below(next, 3) : below(next, PACKS - 4), delayMs: below(next, 25) };
      const { finished } = await runChild(script, exports, reg, at);
      const report = await verifyRegistry(reg).catch((e: { code: string }) => (e.code === 'registry_not_found' ? { ok: true, packs: [] } : Promise.reject(e)));
      expect(report.ok, `seed ${SEED}, round ${k}, kill at ${JSON.stringify(at)}: ${JSON.stringify(report.packs.filter((p) => !p.ok))}`).toBe(true);
      landed.push(finished ? PACKS : report.packs.length);
      // Packs before the kill point were complete before the child announced the next one.
      expect(landed[k], `seed ${SEED}, round ${k}`).toBeGreaterThanOrEqual(at.pack);
      tempFilesSeen += (await readdir(join(reg, 'blobs/sha256')).catch(() => [] as string[])).filter((n) => n.startsWith('.tmp-')).length;
    }
    // Finishing afterwards over whatever the kills left (temp files, orphan blobs) gives the full registry.
    const last = join(registry, `r${KILLS - 2}`);
    expect((await runChild(script, exports, last)).finished).toBe(true);
    const final = await verifyRegistry(last);
    expect(final.ok).toBe(true);
    expect(final.packs).toHaveLength(PACKS);
    // Kills landed at different points: not every run got equally far.
    expect(new Set(landed).size).toBeGreaterThan(1);
    console.log(`[packs-crash] seed ${SEED}; packs published when killed: ${landed.join(' ')}; temp files left behind: ${tempFilesSeen}`);
  });
});
