import { digestBytes } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import { checkBuiltPack } from './read-pack.js';
import { openRegistry, type RegistryDir } from './registry-dir.js';
import { packId, type BuiltPack } from './types.js';

export interface PublishResult {
  name: string;
  version: string;
  digest: string;
  /** True when this exact pack was already in the registry (nothing new was written). */
  alreadyPresent: boolean;
}

function conflict(id: string, existing: string, incoming: string): FlowError {
  return new FlowError(
    'pack_conflict',
    prefixed('packs', `${id} is already published with digest ${existing}; refusing a different body (${incoming}). Publish a new version instead.`),
    { data: { pack: id, existing, incoming } },
  );
}

/** Every blob must hash to its key before anything touches the disk. */
export function assertBlobsIntact(pack: BuiltPack): void {
  for (const [digest, text] of pack.blobs) {
    const actual = digestBytes(text);
    if (actual !== digest) {
      throw new FlowError(
        'blob_digest_mismatch',
        prefixed('packs', `blob ${digest} of ${packId(pack.manifest.name, pack.manifest.version)} hashes to ${actual}`),
        {
          data: { pack: packId(pack.manifest.name, pack.manifest.version), expected: digest, actual },
        },
      );
    }
  }
  if (!pack.blobs.has(pack.digest)) {
    throw new FlowError('manifest_invalid', prefixed('packs', `pack ${pack.digest} carries no manifest blob`));
  }
}

/**
 * Publish a built pack: blobs first, the index entry last (created exclusively), so a reader or a
 * crash never sees a half pack. A different digest under an existing name@version is FlowError
 * `pack_conflict`, detected before any write, so the registry stays byte-identical. (If a racing
 * publisher wins between that check and the index write, its entry stands and ours fails the same
 * way; our blobs remain as unreferenced, harmless content.)
 */
export async function publishPack(target: string | RegistryDir, pack: BuiltPack): Promise<PublishResult> {
  assertBlobsIntact(pack);
  const checked = await checkBuiltPack(pack);
  if (!checked.ok) {
    const id = packId(pack.manifest.name, pack.manifest.version);
    throw new FlowError('pack_invalid', prefixed('packs', `${id}: ${checked.problems.map((p) => p.message).join('; ')}`), {
      data: { pack: id, problems: checked.problems },
    });
  }
  const registry = typeof target === 'string' ? await openRegistry(target, { create: true }) : target;
  const { name, version } = pack.manifest;
  const id = packId(name, version);
  const current = await registry.readIndexEntry(name, version);
  if (current && 'error' in current) {
    throw new FlowError('registry_corrupt', prefixed('packs', `${id}: ${current.error}`), { data: { pack: id } });
  }
  if (current && current.entry.digest !== pack.digest) throw conflict(id, current.entry.digest, pack.digest);

  // Writing the blobs again for a present pack only repairs blobs that are missing or damaged.
  await registry.putBlobs(pack.blobs);
  if (current) return { name, version, digest: pack.digest, alreadyPresent: true };
  const raced = await registry.putIndexEntry({ name, version, digest: pack.digest });
  if (raced && raced.digest !== pack.digest) throw conflict(id, raced.digest, pack.digest);
  return { name, version, digest: pack.digest, alreadyPresent: raced !== undefined };
}
