import { canonicalJson, digestBytes, digestOf, type Digest } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import { EXPORT_FORMAT, exportSchema, manifestSchema, packId, zodIssues, type BuiltPack, type PackExport, type PackManifest } from './types.js';

/** Every blob a manifest references (manifest excluded), in a stable order. */
export function referencedBlobs(manifest: PackManifest): Digest[] {
  const out = new Set<Digest>();
  for (const t of manifest.tools) out.add(t.contract_digest);
  for (const f of manifest.flows) {
    out.add(f.flow_digest);
    out.add(f.source);
  }
  return [...out].sort();
}

/** The export file: manifest plus every referenced blob, self-contained. */
export function toExport(pack: BuiltPack): PackExport {
  const blobs: Record<string, string> = {};
  for (const digest of referencedBlobs(pack.manifest)) blobs[digest] = pack.blobs.get(digest)!;
  return { format: EXPORT_FORMAT, digest: pack.digest, manifest: pack.manifest, blobs };
}

function invalid(message: string, data?: unknown): FlowError {
  return new FlowError('pack_export_invalid', prefixed('packs', message), data === undefined ? {} : { data });
}

/**
 * Read an export file back into a pack, trusting nothing: the manifest must hash to `digest`, every
 * blob to its key, and exactly the referenced blobs must be present.
 */
export function fromExport(text: string, file = 'export file'): BuiltPack {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw invalid(`${file} is not JSON: ${(err as Error).message}`);
  }
  const outer = exportSchema.safeParse(json);
  if (!outer.success) throw invalid(`${file} is not a ${EXPORT_FORMAT} file`, { issues: zodIssues(outer.error) });
  const manifestParse = manifestSchema.safeParse(outer.data.manifest);
  if (!manifestParse.success) throw invalid(`${file} has an invalid manifest`, { issues: zodIssues(manifestParse.error) });
  const manifest = manifestParse.data as PackManifest;
  const id = packId(manifest.name, manifest.version);
  const actual = digestOf(manifest);
  if (actual !== outer.data.digest) {
    throw new FlowError('pack_digest_mismatch', prefixed('packs', `${id}: manifest digest is ${actual}, the file says ${outer.data.digest}`), {
      data: { pack: id, expected: outer.data.digest, actual },
    });
  }
  const blobs = new Map<Digest, string>([[actual, canonicalJson(manifest)]]);
  const wanted = referencedBlobs(manifest);
  for (const digest of wanted) {
    const body = outer.data.blobs[digest];
    if (body === undefined) throw invalid(`${id}: blob ${digest} is missing from ${file}`, { pack: id, missing: digest });
    const got = digestBytes(body);
    if (got !== digest) {
      throw new FlowError('blob_digest_mismatch', prefixed('packs', `${id}: blob ${digest} in ${file} hashes to ${got}`), {
        data: { pack: id, expected: digest, actual: got },
      });
    }
    blobs.set(digest, body);
  }
  const extra = Object.keys(outer.data.blobs).filter((d) => !wanted.includes(d as Digest));
  if (extra.length) throw invalid(`${id}: ${file} carries blobs the manifest does not reference: ${extra.join(', ')}`);
  return { manifest, digest: actual, blobs };
}
