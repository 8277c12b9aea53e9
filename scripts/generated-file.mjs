// The shared tail of the scripts that generate committed source files (build-schema-meta.mjs,
// build-tool-validators.mjs, build-capture-script.mjs): write the file, or with `--check` fail when the
// committed one differs from what the script generates now (the tests run the check).
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

/** Write `text` to `out`, or under `--check` exit 1 when `out` is not exactly `text`. `script` names the generator in the message. */
export async function writeGenerated(out, text, { script, label }) {
  if (process.argv.includes('--check')) {
    const current = await readFile(out, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write(`${basename(out)} is stale: run node ${script}\n`);
      process.exit(1);
    }
    return;
  }
  await writeFile(out, text);
  process.stdout.write(`[${label}] ${out} (${text.length} bytes)\n`);
}
