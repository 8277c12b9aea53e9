// After tsup (scripts/build.mjs): in the CommonJS declarations (dist/**/*.d.cts), an import of a
// package whose types TypeScript can only load as an ES module becomes a type-only import with
// `resolution-mode: "import"`. Without it a consumer's `.cts` file (or a CommonJS project) fails
// under `skipLibCheck: false`: TS1479 for an ES-module-only package (kysely), TS1541 inside the MCP
// SDK's own CommonJS declarations. Which packages: every installed dependency or peer that is an ES
// module with no `require` condition in its exports, plus REQUIRE_TYPES_BROKEN. The CommonJS code
// itself is unchanged (Node >= 22.12 require()s an ES module).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

// Dual packages whose CommonJS declarations do not compile from a CommonJS file (checked with
// TypeScript 5.9 by test/e2e/package-install.test.ts): their ES module declarations are used instead.
const REQUIRE_TYPES_BROKEN = ['@modelcontextprotocol/sdk'];

function esmOnly(name) {
  const file = join(root, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return false;
  const p = JSON.parse(readFileSync(file, 'utf8'));
  return p.type === 'module' && !JSON.stringify(p.exports ?? {}).includes('"require"');
}

const names = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
const targets = new Set([...names.filter(esmOnly), ...REQUIRE_TYPES_BROKEN]);
const packageOf = (s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]);
const IMPORT = /^import (\{[^}]*\}|\* as \w+|\w+) from '([^'.][^']*)';$/gm;

const files = [
  ...readdirSync(dist).map((f) => join(dist, f)),
  ...(existsSync(join(dist, 'adapters')) ? readdirSync(join(dist, 'adapters')).map((f) => join(dist, 'adapters', f)) : []),
].filter((f) => f.endsWith('.d.cts'));
let changed = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(IMPORT, (line, what, from) => {
    if (!targets.has(packageOf(from))) return line;
    changed++;
    return `import type ${what} from '${from}' with { 'resolution-mode': 'import' };`;
  });
  if (next !== text) writeFileSync(file, next);
}
process.stderr.write(`[dts-resolution-mode] ${changed} import(s) of ${[...targets].sort().join(', ')} in .d.cts files\n`);
