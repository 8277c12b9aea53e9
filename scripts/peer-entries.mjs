// After tsup (scripts/build.mjs): every library entry of dist/ whose code imports an optional peer
// (package.json peerDependencies) becomes a small wrapper that checks those peers, then loads the
// entry's code, moved beside it as <entry>.impl.js / .impl.cjs. A missing peer is then one error at
// import time naming every package to install (src/util/peer-check.ts), not an ERR_MODULE_NOT_FOUND
// from a chunk. The peers of an entry are found, not listed: the static imports its code reaches,
// through the chunks, that name a peer; plus the peers an entry only loads on demand but is for
// (ON_DEMAND). The wrapper's named exports are the module's own (it is loaded here to list them).
// Prints one line per wrapped entry; `--check` only prints (no writes). Where a runtime has no
// `import.meta.resolve` (some bundlers), the check passes and the import itself reports a missing peer.
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const peerNames = new Set(Object.keys(pkg.peerDependencies ?? {}));

// Entries that load a peer on demand (dynamic import) but exist for it: checked at import as well.
const ON_DEMAND = { 'adapters/executor-playwright': ['playwright-core'] };

const packageOf = (specifier) => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
};

const STATIC_ESM = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']/g;
const STATIC_CJS = /\brequire\(\s*["']([^"']+)["']\s*\)/g;

/** Peer name -> specifiers, over the static imports reachable from `file`. */
function staticPeers(file, pattern) {
  const seen = new Set();
  const peers = new Map();
  const walk = (f) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const m of readFileSync(f, 'utf8').matchAll(pattern)) {
      const specifier = m[1] ?? m[2];
      if (specifier.startsWith('.')) {
        walk(resolve(dirname(f), specifier));
        continue;
      }
      const name = packageOf(specifier);
      if (!peerNames.has(name)) continue;
      if (!peers.has(name)) peers.set(name, new Set());
      peers.get(name).add(specifier);
    }
  };
  walk(file);
  return peers;
}

function entries() {
  const top = readdirSync(dist).filter((f) => f.endsWith('.js') && !f.startsWith('chunk-') && !f.endsWith('.impl.js'));
  const adapters = readdirSync(join(dist, 'adapters')).filter((f) => f.endsWith('.js') && !f.endsWith('.impl.js'));
  return [...top.map((f) => f.slice(0, -3)), ...adapters.map((f) => `adapters/${f.slice(0, -3)}`)].filter((e) => e !== 'peer-check');
}

const asObject = (peers) => Object.fromEntries([...peers].sort(([a], [b]) => a.localeCompare(b)).map(([name, specs]) => [name, [...specs].sort()]));
const publicName = (entry) => (entry === 'index' ? pkg.name : `${pkg.name}/${entry}`);
const checkOnly = process.argv.includes('--check');

for (const entry of entries()) {
  const esm = join(dist, `${entry}.js`);
  const cjs = join(dist, `${entry}.cjs`);
  if (!existsSync(cjs)) continue;
  const esmPeers = staticPeers(esm, STATIC_ESM);
  const cjsPeers = staticPeers(cjs, STATIC_CJS);
  for (const name of ON_DEMAND[entry] ?? []) {
    for (const peers of [esmPeers, cjsPeers]) if (!peers.has(name)) peers.set(name, new Set([name]));
  }
  if (esmPeers.size === 0 && cjsPeers.size === 0) continue;
  process.stderr.write(`[peer-entries] ${publicName(entry)}: ${[...new Set([...esmPeers.keys(), ...cjsPeers.keys()])].sort().join(', ')}\n`);
  if (checkOnly) continue;
  const base = entry.split('/').pop();
  const check = relative(dirname(esm), join(dist, 'peer-check')).replaceAll('\\', '/');
  const checkPath = check.startsWith('.') ? check : `./${check}`;
  renameSync(esm, join(dist, `${entry}.impl.js`));
  renameSync(cjs, join(dist, `${entry}.impl.cjs`));
  const names = Object.keys(await import(pathToFileURL(join(dist, `${entry}.impl.js`)).href)).filter((n) => n !== 'default');
  const head = `// ${publicName(entry)}: checks its optional peers, then loads its code (scripts/peer-entries.mjs).`;
  writeFileSync(
    esm,
    `${head}
import { checkPeers } from '${checkPath}.js';
checkPeers(${JSON.stringify(publicName(entry))}, ${JSON.stringify(asObject(esmPeers))}, (specifier) => import.meta.resolve?.(specifier));
const entry = await import('./${base}.impl.js');
export const { ${names.join(', ')} } = entry;
`,
  );
  writeFileSync(
    cjs,
    `'use strict';
${head}
require('${checkPath}.cjs').checkPeers(${JSON.stringify(publicName(entry))}, ${JSON.stringify(asObject(cjsPeers))}, require.resolve);
module.exports = require('./${base}.impl.cjs');
`,
  );
}
