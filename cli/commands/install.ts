import { relative, resolve, sep } from 'node:path';
import { prettyJson } from '../../src/engine-entry.js';
import { installPacks, readPacksLock } from '../../src/packs/install.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { DEFAULT_REGISTRY } from './pack.js';
import { packProgress } from './registry.js';

/** The packs lock `install` reads; no subcommand writes it. */
export const DEFAULT_PACKS_LOCK = 'flowctl.packs.lock';

/**
 * `flowctl install --from <registry-dir> [--lock <file>] [--to <dir>] [--json]`: verify every pack the
 * lock pins, then republish them all into the local registry; on any mismatch install nothing.
 */
export default async function install(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'install', ['from', 'lock', 'to', 'json']);
  if (args.positionals.length) throw new UsageError('install takes no positional arguments (use --from <registry-dir>)');
  const from = flagString(args, 'from');
  if (!from) throw new UsageError('install needs --from <registry-dir>');
  const json = flagBool(args, 'json');
  const lockPath = resolve(io.cwd, flagString(args, 'lock') ?? DEFAULT_PACKS_LOCK);
  const to = resolve(io.cwd, flagString(args, 'to') ?? DEFAULT_REGISTRY);
  const progress = packProgress(io, 'install');
  try {
    const lock = await readPacksLock(lockPath);
    const report = await installPacks({ lock, from: resolve(io.cwd, from), to, onProgress: progress.onProgress }).finally(() => progress.done());
    const where = relative(io.cwd, to).split(sep).join('/') || '.';
    for (const p of report.installed) io.stderr.write(`${p.alreadyPresent ? 'already installed' : 'installed'} ${p.name}@${p.version} ${p.digest}\n`);
    io.stderr.write(`${report.installed.length} pack(s) verified and installed in ${where}\n`);
    if (json) io.stdout.write(`${prettyJson({ installed: report.installed, to: where })}\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(io, err, { json, command: 'install' });
  }
}
