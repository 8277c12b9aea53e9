import { readdirSync, existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

// Every folder in adapters/ with an index.ts is a subpath export: flowctl/adapters/<name>.
const adapterEntries = Object.fromEntries(
  readdirSync('adapters', { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`adapters/${d.name}/index.ts`))
    .map((d) => [`adapters/${d.name}`, `adapters/${d.name}/index.ts`]),
);

const external = [/^[^./]/];

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
    // Its own folder, so its chunks never collide with the library's chunks.
    outDir: 'dist/cli',
    format: ['esm'],
    dts: false,
    clean: false,
    target: 'node22',
    platform: 'node',
    splitting: true,
    external,
  },
]);
