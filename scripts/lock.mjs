// `npm run lock`: regenerate package-lock.json from package.json, then check that it is complete.
// `npm run lock -- --check`: only the check (CI can run it; it reads the lock and nothing else).
//
// Complete means: every optional dependency of every locked package (the per-platform builds of
// rollup, esbuild, ...) is in the lock. npm ci refuses a lock that misses one ("Missing:
// @rollup/rollup-android-arm-eabi@ from lock file"), and npm leaves one out silently when the registry
// cannot resolve it at resolve time (a registry mirror without a platform build of the newest
// version). package.json's `overrides` pins such a package to a version the registry has whole.
//
// The resolve runs in a temp folder holding only package.json (and .npmrc), so node_modules here,
// which others may be using, is never touched; only package-lock.json is replaced. Equivalent by
// hand: copy package.json to an empty folder, `npm install --package-lock-only --ignore-scripts`
// there, copy package-lock.json back.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const say = (text) => process.stderr.write(`[lock] ${text}\n`);

/** The optional dependencies the lock misses, as "<locked package> -> <name>@<range>". */
export function missingOptional(lock) {
  const packages = lock.packages ?? {};
  const missing = [];
  for (const [path, meta] of Object.entries(packages)) {
    for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
      // Resolve as Node does: <path>/node_modules/<name>, then each enclosing node_modules, then the root.
      let base = path;
      let found = false;
      for (;;) {
        if (packages[`${base ? `${base}/` : ''}node_modules/${name}`]) {
          found = true;
          break;
        }
        if (base === '') break;
        const up = base.lastIndexOf('/node_modules/');
        base = up >= 0 ? base.slice(0, up) : '';
      }
      if (!found) missing.push(`${path || '(root)'} -> ${name}@${range}`);
    }
  }
  return missing;
}

function check() {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const missing = missingOptional(lock);
  if (missing.length > 0) {
    say(`package-lock.json misses ${missing.length} optional package(s); npm ci would refuse it:`);
    for (const m of missing) say(`  ${m}`);
    say('pin the package in package.json "overrides" to a version the registry has for every platform, then npm run lock');
    process.exit(1);
  }
  say(`package-lock.json is complete: ${Object.keys(lock.packages ?? {}).length - 1} packages, every optional dependency locked`);
}

if (!process.argv.includes('--check')) {
  const temp = mkdtempSync(join(tmpdir(), 'flowctl-lock-'));
  try {
    copyFileSync(join(root, 'package.json'), join(temp, 'package.json'));
    if (existsSync(join(root, '.npmrc'))) copyFileSync(join(root, '.npmrc'), join(temp, '.npmrc'));
    say(`resolving package.json afresh in ${temp} (npm install --package-lock-only --ignore-scripts)`);
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: temp, stdio: 'inherit' });
    copyFileSync(join(temp, 'package-lock.json'), join(root, 'package-lock.json'));
    say('package-lock.json replaced');
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
check();
