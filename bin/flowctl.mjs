#!/usr/bin/env node
// The package's bin: a thin launcher over the built CLI (cli/, built into dist/ by scripts/setup.sh, `npm run build`, and before packing).
import { enableCompileCache } from 'node:module';

// V8's code cache for every module flowctl loads (its chunks, zod, ajv, playwright-core...), kept by
// Node in its compile-cache folder (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE; off with
// NODE_DISABLE_COMPILE_CACHE=1): a later start skips parsing and compiling them again. Before the CLI
// is imported, so it covers every module of it.
enableCompileCache?.();
const { main, defaultIO } = await import('../dist/cli/cli.js');

/** Resolves once everything written to `stream` so far is flushed (a pipe's writes are asynchronous). */
const flushed = (stream) => new Promise((resolve) => stream.write('', () => resolve()));

// FLOWCTL_BROWSER_EXIT=close: close a run's browser gracefully instead (docs/cli.md, "Environment").
main(process.argv.slice(2), { ...defaultIO(), exitsAfter: process.env.FLOWCTL_BROWSER_EXIT !== 'close' }).then(
  async (code) => {
    // The command is done. Its output is flushed, then the process ends here: a browser a run left open
    // (exitsAfter) is killed by playwright-core's exit handler, its profile folder removed.
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    process.exit(code);
  },
  async (err) => {
    process.stderr.write(`[flowctl] internal error: ${err?.stack ? err.stack : String(err)}\n`);
    await flushed(process.stderr);
    process.exit(70);
  },
);
