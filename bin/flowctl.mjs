#!/usr/bin/env node
// The package's bin: a thin launcher over the built CLI (cli/, built into dist/ by scripts/setup.sh, `npm run build`, and before packing).
import { main } from '../dist/cli/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`[flowctl] internal error: ${err?.stack ? err.stack : String(err)}\n`);
    process.exitCode = 70;
  },
);
