// Regenerate the golden FlowSpecs and digests of test/fixtures/flows with the built CLI:
//   node test/golden/regenerate.mjs
// Run it only when a change to the compiler or to a built-in tool contract is meant to move them,
// and say so in the changeset: every digest of every user's flow moves with them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const flowsDir = join(root, 'test/fixtures/flows');
const goldenDir = join(root, 'test/golden');

const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// An empty project directory: no flowctl.lock, so every tool resolves to its highest version.
const cwd = mkdtempSync(join(tmpdir(), 'flowctl-golden-'));
const digests = {};
try {
  for (const file of readdirSync(flowsDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const name = file.replace(/\.yaml$/, '');
    const r = spawnSync(process.execPath, [join(root, 'bin/flowctl.mjs'), 'compile', join(flowsDir, file), '--check', '--json'], { cwd, encoding: 'utf8' });
    if (r.status !== 0) {
      process.stderr.write(r.stderr);
      process.exit(1);
    }
    const spec = JSON.parse(r.stdout);
    const digest = r.stderr.trim().split('\n').pop();
    writeFileSync(join(goldenDir, `${name}.flowspec.json`), r.stdout);
    digests[name] = digest;
    process.stderr.write(`${name} ${digest} (${spec.steps.length} steps)\n`);
  }
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
writeFileSync(join(goldenDir, 'digests.json'), `${JSON.stringify(digests, null, 2)}\n`);
