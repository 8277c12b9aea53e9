import type { Digest } from '../canonical.js';
import { readPack, type BlobCache } from './read-pack.js';
import { openRegistry, type RegistryDir } from './registry-dir.js';
import type { PackProblem } from './types.js';

export interface PackVerdict {
  /** `name@version` (the index file's name when the entry itself is unreadable). */
  pack: string;
  digest?: Digest;
  ok: boolean;
  problems: PackProblem[];
}

export interface VerifyReport {
  ok: boolean;
  packs: PackVerdict[];
}

/** Progress callback: `done` of `total` packs handled; `pack` is the one just handled. */
export type ProgressFn = (done: number, total: number, pack: string) => void;

/** Packs checked at once: their blob reads overlap, which matters on slow or busy disks. */
const CONCURRENCY = 16;

/** Check every pack of an open registry (index -> manifest -> every blob), sharing blob checks. */
export async function verifyOpenRegistry(registry: RegistryDir, onProgress?: ProgressFn): Promise<VerifyReport> {
  const listing = await registry.listIndex();
  const cache: BlobCache = new Map();
  const packs: PackVerdict[] = new Array(listing.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < listing.length) {
      const i = next++;
      const item = listing[i]!;
      if ('error' in item) {
        packs[i] = { pack: item.id, ok: false, problems: [{ code: 'index_invalid', message: item.error }] };
      } else {
        const result = await readPack(registry, item.entry, cache);
        packs[i] = { pack: item.id, digest: item.entry.digest, ok: result.ok, problems: result.ok ? [] : result.problems };
      }
      onProgress?.(++done, listing.length, item.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, listing.length) }, worker));
  return { ok: packs.every((p) => p.ok), packs };
}

/** `registry verify`: FlowError `registry_not_found` when `dir` is not a registry. */
export async function verifyRegistry(dir: string, options: { onProgress?: ProgressFn } = {}): Promise<VerifyReport> {
  return verifyOpenRegistry(await openRegistry(dir), options.onProgress);
}
