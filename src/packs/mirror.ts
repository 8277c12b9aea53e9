import type { Digest } from '../canonical.js';
import { FlowError, isFlowError, prefixed } from '../errors.js';
import { publishPack } from './publish.js';
import { readPack, type BlobCache } from './read-pack.js';
import { openRegistry, type IndexListing, type RegistryDir } from './registry-dir.js';
import type { IndexEntry, PackProblem } from './types.js';
import type { ProgressFn } from './verify.js';

/**
 * Mirror modes. `--to` is the near side, `--from` the far side:
 * - pull: copy packs of `from` that `to` lacks into `to`
 * - push: copy packs of `to` that `from` lacks into `from`
 * - sync: both, so afterwards both hold the union
 */
export type MirrorMode = 'pull' | 'push' | 'sync';
export const MIRROR_MODES: readonly MirrorMode[] = ['pull', 'push', 'sync'];

export interface MirrorOptions {
  from: string;
  to: string;
  /** Default `pull`. */
  mode?: MirrorMode;
  /** Only packs matching one of these (`*` wildcard; with `@` matched against name@version, else the name). Default: all. */
  packs?: string[];
  onProgress?: ProgressFn;
}

export interface MirrorReport {
  mode: MirrorMode;
  /** Packs written, with the registry they were written into (`from` or `to`). */
  copied: { pack: string; digest: Digest; into: 'from' | 'to' }[];
  /** Packs the destination already held with the same digest. */
  present: { pack: string; digest: Digest; into: 'from' | 'to' }[];
  /** The same name@version with different digests on the two sides: copied nowhere. */
  conflicts: { pack: string; from_digest: Digest; to_digest: Digest }[];
  /** Source packs that failed verification: not copied. */
  failed: { pack: string; side: 'from' | 'to'; problems: PackProblem[] }[];
  ok: boolean;
}

/** `*` matches any run of characters; everything else is literal. */
export function packPatternMatches(pattern: string, name: string, version: string): boolean {
  const subject = pattern.includes('@') ? `${name}@${version}` : name;
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(subject);
}

function selected(listing: IndexListing[], patterns: string[]): { good: Map<string, IndexEntry>; bad: IndexListing[] } {
  const good = new Map<string, IndexEntry>();
  const bad: IndexListing[] = [];
  for (const item of listing) {
    if ('error' in item) {
      const [name = item.id, version = ''] = item.id.split('@');
      if (!patterns.length || patterns.some((p) => packPatternMatches(p, name, version))) bad.push(item);
    } else if (!patterns.length || patterns.some((p) => packPatternMatches(p, item.entry.name, item.entry.version))) {
      good.set(item.id, item.entry);
    }
  }
  return { good, bad };
}

/** Replicate packs between two registries; each pack is verified at the source before it is copied. */
export async function mirrorRegistries(options: MirrorOptions): Promise<MirrorReport> {
  const mode = options.mode ?? 'pull';
  if (!MIRROR_MODES.includes(mode)) {
    throw new FlowError('invalid_mode', prefixed('packs', `--mode must be pull, push or sync (got "${mode}")`));
  }
  const patterns = options.packs ?? [];
  // The side packs are copied from must exist; the side they are copied into is created when missing.
  // Open it first, so a missing source creates nothing.
  const push = mode === 'push';
  const to = push ? await openRegistry(options.to) : undefined;
  const from = await openRegistry(options.from, { create: push });
  const near = to ?? (await openRegistry(options.to, { create: true }));
  const sides = { from: selected(await from.listIndex(), patterns), to: selected(await near.listIndex(), patterns) };
  const report: MirrorReport = { mode, copied: [], present: [], conflicts: [], failed: [], ok: true };

  for (const [id, a] of sides.from.good) {
    const b = sides.to.good.get(id);
    if (b && b.digest !== a.digest) report.conflicts.push({ pack: id, from_digest: a.digest, to_digest: b.digest });
  }
  const conflicting = new Set(report.conflicts.map((c) => c.pack));
  const directions: { source: RegistryDir; dest: RegistryDir; src: 'from' | 'to'; into: 'from' | 'to' }[] = [];
  if (mode !== 'push') directions.push({ source: from, dest: near, src: 'from', into: 'to' });
  if (mode !== 'pull') directions.push({ source: near, dest: from, src: 'to', into: 'from' });

  const work: { dir: (typeof directions)[number]; entry: IndexEntry; id: string }[] = [];
  for (const dir of directions) {
    for (const bad of sides[dir.src].bad) {
      if ('error' in bad) report.failed.push({ pack: bad.id, side: dir.src, problems: [{ code: 'index_invalid', message: bad.error }] });
    }
    for (const [id, entry] of sides[dir.src].good) {
      if (conflicting.has(id)) continue;
      if (sides[dir.into].good.get(id)?.digest === entry.digest) report.present.push({ pack: id, digest: entry.digest, into: dir.into });
      else work.push({ dir, entry, id });
    }
  }

  const caches: Record<'from' | 'to', BlobCache> = { from: new Map(), to: new Map() };
  let done = 0;
  for (const item of work) {
    const read = await readPack(item.dir.source, item.entry, caches[item.dir.src]);
    if (!read.ok) {
      report.failed.push({ pack: item.id, side: item.dir.src, problems: read.problems });
    } else {
      try {
        const result = await publishPack(item.dir.dest, read.pack);
        (result.alreadyPresent ? report.present : report.copied).push({ pack: item.id, digest: item.entry.digest, into: item.dir.into });
      } catch (err) {
        // Another writer published a different body between our listing and our write.
        if (!isFlowError(err, 'pack_conflict')) throw err;
        const data = err.data as { existing: Digest; incoming: Digest };
        const [fromDigest, toDigest] = item.dir.into === 'to' ? [data.incoming, data.existing] : [data.existing, data.incoming];
        report.conflicts.push({ pack: item.id, from_digest: fromDigest, to_digest: toDigest });
      }
    }
    options.onProgress?.(++done, work.length, item.id);
  }
  report.ok = report.conflicts.length === 0 && report.failed.length === 0;
  return report;
}
