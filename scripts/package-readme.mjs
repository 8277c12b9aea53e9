// The README inside the package is README.package.md (written for package users: install, quick
// start, links to shipped files only); the clone keeps its own README.md. npm always packs the root
// README.md, so `prepack` runs `in` (README.md set aside as .README.clone.md, README.package.md copied
// in its place) and `postpack` runs `out` (the clone's README.md back). Both are idempotent, and `out`
// is safe to run by hand after a failed pack. `npm pack --ignore-scripts` runs neither: use
// `node scripts/package-readme.mjs in && npm pack --ignore-scripts; node scripts/package-readme.mjs out`.
import { copyFileSync, existsSync, renameSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const at = (name) => fileURLToPath(new URL(`../${name}`, import.meta.url));
const [readme, saved, forPackage] = [at('README.md'), at('.README.clone.md'), at('README.package.md')];

const step = process.argv[2];
if (step === 'in') {
  if (!existsSync(saved)) renameSync(readme, saved);
  copyFileSync(forPackage, readme);
} else if (step === 'out') {
  if (existsSync(saved)) renameSync(saved, readme);
} else {
  process.stderr.write('usage: node scripts/package-readme.mjs in|out\n');
  process.exit(2);
}
