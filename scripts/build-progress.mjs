// The build with a progress line per part: `bash scripts/setup.sh` runs it after installing the
// dependencies (so the `flowctl` bin works right away), and npm runs it before packing (`prepack`).
// Not an install script: a consumer installing the package (from the registry, a tarball or git)
// runs nothing of ours, and gets the dist/ the tarball ships.
//
// The build (scripts/build.mjs: tsup, library ESM + CJS + type declarations, and the CLI) takes a
// while on a small machine, so this prints one progress line per finished part and a line every
// 15 s while it works, instead of tsup's per-file listing (printed in full only when the build fails;
// `npm run build` shows it always).
import { spawn } from 'node:child_process';

const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const say = (text) => process.stderr.write(`[flowctl build] ${text}\n`);

// What tsup reports when a part is done, and how to name it.
const PARTS = [
  [/ESM .*Build success/, 'ES modules'],
  [/CJS .*Build success/, 'CommonJS modules'],
  [/DTS .*Build success/, 'type declarations'],
  [/^\[web\] dist\/web built/, 'web app'],
];
const EXPECTED = 5; // library ESM, library CJS, library types, CLI ESM, the web app

say(`building dist/ (library as ES modules, CommonJS and type declarations, the flowctl CLI, and the hosted web app): ${EXPECTED} parts`);
const child = spawn(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
let pending = '';
let done = 0;
let cliFiles = false;
const onText = (chunk) => {
  log += chunk;
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) {
    // tsup lists a part's files just before its success line: files in dist/cli/ mean the CLI.
    if (/ dist\/cli\//.test(line)) cliFiles = true;
    const part = PARTS.find(([pattern]) => pattern.test(line));
    if (!part) continue;
    const name =
      part[1] === 'ES modules'
        ? cliFiles
          ? 'the flowctl CLI'
          : 'library ES modules'
        : part[1] === 'web app'
          ? 'the hosted web app (dist/web)'
          : `library ${part[1]}`;
    cliFiles = false;
    say(`${++done}/${EXPECTED} ${name} built (${elapsed()})`);
  }
};
child.stdout.setEncoding('utf8').on('data', onText);
child.stderr.setEncoding('utf8').on('data', onText);
const heartbeat = setInterval(() => say(`still building, ${done}/${EXPECTED} parts done (${elapsed()})`), 15_000);

child.on('close', (code, signal) => {
  clearInterval(heartbeat);
  if (code === 0) {
    say(`done in ${elapsed()}: dist/ is built and bin/flowctl.mjs runs (bash scripts/setup.sh also puts flowctl on your PATH)`);
    process.exit(0);
  }
  process.stderr.write(log);
  say(`build failed (${signal ?? `exit ${code}`}) after ${elapsed()}; the output above says why. Retry with: npm run build`);
  process.exit(code ?? 1);
});
