#!/usr/bin/env node
// The package's bin: a thin launcher over the built CLI (cli/, built into dist/ by scripts/setup.sh, `npm run build`, and before packing).
import { enableCompileCache } from 'node:module';

// V8's code cache for every module flowctl loads (its chunks, zod, ajv, playwright-core...), kept by
// Node in its compile-cache folder (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE; off with
// NODE_DISABLE_COMPILE_CACHE=1): a later start skips parsing and compiling them again. Before the CLI
// is imported, so it covers every module of it.
enableCompileCache?.();
const { main } = await import('../dist/cli/cli.js');

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`[flowctl] internal error: ${err?.stack ? err.stack : String(err)}\n`);
    process.exitCode = 70;
  },
);
