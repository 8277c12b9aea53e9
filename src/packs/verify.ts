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

/** Check every pack of an open registry (index -> manifest -> every blob), sharing blob checks. */
export async function verifyOpenRegistry(registry: RegistryDir, onProgress?: ProgressFn): Promise<VerifyReport> {
  const listing = await registry.listIndex();
  const cache: BlobCache = new Map();
  const packs: PackVerdict[] = [];
  for (const item of listing) {
    if ('error' in item) {
      packs.push({ pack: item.id, ok: false, problems: [{ code: 'index_invalid', message: item.error }] });
    } else {
      const result = await readPack(registry, item.entry, cache);
      packs.push({ pack: item.id, digest: item.entry.digest, ok: result.ok, problems: result.ok ? [] : result.problems });
    }
    onProgress?.(packs.length, listing.length, item.id);
  }
  return { ok: packs.every((p) => p.ok), packs };
}

/** `registry verify`: FlowError `registry_not_found` when `dir` is not a registry. */
export async function verifyRegistry(dir: string, options: { onProgress?: ProgressFn } = {}): Promise<VerifyReport> {
  return verifyOpenRegistry(await openRegistry(dir), options.onProgress);
}
