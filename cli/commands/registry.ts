import { relative, resolve, sep } from 'node:path';
import { prettyJson } from '../../src/engine-entry.js';
import type { MirrorMode, MirrorReport } from '../../src/packs-entry.js';
import { mirrorRegistries, MIRROR_MODES } from '../../src/packs/mirror.js';
import { listRegistry } from '../../src/packs/registry-dir.js';
import { verifyRegistry, type ProgressFn } from '../../src/packs/verify.js';
import { assertKnownFlags, flagBool, flagString, flagStrings, UsageError, type ParsedArgs } from '../args.js';
import { reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { DEFAULT_REGISTRY } from './pack.js';

const FLAGS: Record<string, readonly string[]> = {
  mirror: ['from', 'to', 'packs', 'mode', 'json'],
  ls: ['registry', 'json'],
  verify: ['registry', 'json'],
};

/**
 * A counter line on stderr (`label 12/500`), rewritten in place, only when stderr is a terminal:
 * logs and pipes get no progress noise. `done()` ends the line.
 */
export function packProgress(io: CliIO, label: string): { onProgress?: ProgressFn; done(): void } {
  if (!io.stderr.isTTY) return { done() {} };
  let shown = false;
  return {
    onProgress(done, total) {
      io.stderr.write(`\r\x1b[2K${label} ${done}/${total}`);
      shown = true;
    },
    done() {
      if (shown) io.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}

function shown(io: CliIO, dir: string): string {
  return relative(io.cwd, dir).split(sep).join('/') || '.';
}

/** The registry of ls and verify: --registry, else a positional directory, else the local one. */
function registryDir(args: ParsedArgs, io: CliIO): string {
  const flag = flagString(args, 'registry');
  const positional = args.positionals[1];
  if (flag !== undefined && positional !== undefined && resolve(io.cwd, flag) !== resolve(io.cwd, positional)) {
    throw new UsageError(`two registries given ("${positional}" and --registry "${flag}")`);
  }
  return resolve(io.cwd, flag ?? positional ?? DEFAULT_REGISTRY);
}

async function ls(args: ParsedArgs, io: CliIO): Promise<number> {
  const dir = registryDir(args, io);
  const listing = await listRegistry(dir);
  for (const item of listing) io.stderr.write('error' in item ? `${item.id}  UNREADABLE: ${item.error}\n` : `${item.id}  ${item.entry.digest}\n`);
  if (!listing.length) io.stderr.write(`no packs in ${shown(io, dir)}\n`);
  if (flagBool(args, 'json')) {
    const packs = listing.map((item) => ('error' in item ? { pack: item.id, error: item.error } : { ...item.entry }));
    io.stdout.write(`${prettyJson({ packs })}\n`);
  }
  return EXIT.ok;
}

async function verify(args: ParsedArgs, io: CliIO): Promise<number> {
  const dir = registryDir(args, io);
  const progress = packProgress(io, 'verify');
  const report = await verifyRegistry(dir, { onProgress: progress.onProgress }).finally(() => progress.done());
  for (const p of report.packs) {
    if (p.ok) continue;
    io.stderr.write(`FAIL ${p.pack}\n`);
    for (const problem of p.problems) {
      const detail = problem.expected ? ` (expected ${problem.expected}${problem.actual ? `, actual ${problem.actual}` : ''})` : '';
      io.stderr.write(`  ${problem.code}: ${problem.message}${detail}\n`);
    }
  }
  const failed = report.packs.filter((p) => !p.ok).length;
  io.stderr.write(`${report.packs.length - failed}/${report.packs.length} pack(s) verified in ${shown(io, dir)}${failed ? `; ${failed} failed` : ''}\n`);
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson(report)}\n`);
  return report.ok ? EXIT.ok : EXIT.failed;
}

function printMirror(io: CliIO, report: MirrorReport, names: { from: string; to: string }): void {
  for (const c of report.copied) io.stderr.write(`copied ${c.pack} ${c.digest} into ${names[c.into]}\n`);
  for (const c of report.conflicts) {
    io.stderr.write(`CONFLICT ${c.pack}: ${names.from} has ${c.from_digest}, ${names.to} has ${c.to_digest}; not copied\n`);
  }
  for (const f of report.failed) {
    io.stderr.write(`FAIL ${f.pack} in ${names[f.side]}: ${f.problems.map((p) => p.message).join('; ')}; not copied\n`);
  }
  io.stderr.write(
    `mirror ${report.mode}: ${report.copied.length} copied, ${report.present.length} already present, ${report.conflicts.length} conflict(s), ${report.failed.length} failed\n`,
  );
}

async function mirror(args: ParsedArgs, io: CliIO): Promise<number> {
  const from = flagString(args, 'from');
  const to = flagString(args, 'to');
  if (!from || !to) throw new UsageError('registry mirror needs --from <dir> and --to <dir>');
  const mode = (flagString(args, 'mode') ?? 'pull') as MirrorMode;
  if (!MIRROR_MODES.includes(mode)) throw new UsageError(`--mode must be pull, push or sync (got "${mode}")`);
  const progress = packProgress(io, `mirror ${mode}`);
  const dirs = { from: resolve(io.cwd, from), to: resolve(io.cwd, to) };
  const report = await mirrorRegistries({ ...dirs, mode, packs: flagStrings(args, 'packs'), onProgress: progress.onProgress }).finally(() => progress.done());
  printMirror(io, report, { from: shown(io, dirs.from), to: shown(io, dirs.to) });
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson(report)}\n`);
  return report.ok ? EXIT.ok : EXIT.failed;
}

const SUBCOMMANDS: Record<string, (args: ParsedArgs, io: CliIO) => Promise<number>> = { mirror, ls, verify };

/** `flowctl registry mirror|ls|verify`: see docs/packs.md. */
export default async function registry(args: ParsedArgs, io: CliIO): Promise<number> {
  const sub = args.positionals[0];
  const run = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!sub || !run) throw new UsageError(`registry needs a subcommand: mirror, ls or verify${sub ? ` (got "${sub}")` : ''}`);
  assertKnownFlags(args, `registry ${sub}`, FLAGS[sub]!);
  // `registry ls <dir>` and `registry verify <dir>` read like `--registry <dir>`; mirror takes flags only.
  const maxPositionals = sub === 'mirror' ? 1 : 2;
  if (args.positionals.length > maxPositionals) {
    throw new UsageError(
      sub === 'mirror' ? 'registry mirror takes no positional arguments (use --from and --to)' : `registry ${sub} takes at most one registry directory`,
    );
  }
  try {
    return await run(args, io);
  } catch (err) {
    return reportError(io, err, { json: flagBool(args, 'json'), command: `registry ${sub}` });
  }
}
