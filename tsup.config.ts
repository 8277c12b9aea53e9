import { createHash } from 'node:crypto';
import { readdirSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';

/**
 * The CLI's build id: the package version and a digest of every source file bundled into it. The
 * compiled-spec cache keys on it (cli/spec-cache.ts), so a rebuilt compiler never reads entries an
 * older build wrote, even under the same version.
 */
function buildId(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, d.name);
      if (d.isDirectory()) walk(path);
      else if (/\.(ts|json|mjs|js)$/.test(d.name)) hash.update(`${path}\0`).update(readFileSync(path)).update('\0');
    }
  };
  for (const dir of ['src', 'cli', 'adapters']) walk(dir);
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  return `${version}+${hash.digest('hex').slice(0, 16)}`;
}

// Every folder in adapters/ with an index.ts is a subpath export: flowctl/adapters/<name>.
const adapterEntries = Object.fromEntries(
  readdirSync('adapters', { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`adapters/${d.name}/index.ts`))
    .map((d) => [`adapters/${d.name}`, `adapters/${d.name}/index.ts`]),
);

const external = [/^[^./]/];
/** The packages (and their subpaths) the CLI bundles into its chunks instead of importing them. */
const CLI_BUNDLED = `(${['zod', 'yaml', 'ajv', 'fast-uri', 'fast-deep-equal', 'json-schema-traverse'].join('|')})(/|$)`;

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      // The engine alone (docs/architecture.md): for processes that only run flows.
      engine: 'src/engine-entry.ts',
      // Port interfaces and adapter helpers; packs and registries.
      ports: 'src/ports-entry.ts',
      packs: 'src/packs-entry.ts',
      testing: 'testing/index.ts',
      // Not a subpath export: the optional-peer check the wrapped entries load (scripts/peer-entries.mjs).
      'peer-check': 'src/util/peer-check.ts',
      ...adapterEntries,
      // The subprocess sandbox forks this script (adapters/sandbox-subprocess/worker-process.ts finds it).
      'adapters/sandbox-subprocess-worker': 'adapters/sandbox-subprocess/worker.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: false,
    // scripts/build.mjs empties dist/ first: a clean here would race the CLI build, which runs in parallel.
    clean: false,
    target: 'node22',
    platform: 'node',
    splitting: true,
    treeshake: true,
    external,
  },
  {
    // The CLI: ESM only, commands split into lazily loaded chunks so `flowctl --help` starts fast.
    entry: { cli: 'cli/main.ts' },
    define: { __FLOWCTL_BUILD__: JSON.stringify(buildId()) },
    // Its own folder, so its chunks never collide with the library's chunks.
    outDir: 'dist/cli',
    format: ['esm'],
    dts: false,
    clean: false,
    target: 'node22',
    platform: 'node',
    splitting: true,
    // zod, yaml and Ajv (with Ajv's own dependencies) are bundled in: loaded from node_modules they are
    // some 240 modules, each resolved, read and linked at every start (about 50 ms of CPU while Chromium
    // starts, docs/cli.md "Start-up work"). Bundled, CommonJS among them needs a require.
    external: [new RegExp(`^(?!${CLI_BUNDLED})[^./]`)],
    noExternal: [new RegExp(`^${CLI_BUNDLED}`)],
    banner: { js: "import { createRequire as __flowctlCreateRequire } from 'node:module';\nconst require = __flowctlCreateRequire(import.meta.url);" },
  },
]);
