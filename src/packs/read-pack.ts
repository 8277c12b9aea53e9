import { z } from 'zod';
import { digestBytes, digestOf, type Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import type { ToolContract } from '../tools/types.js';
import type { RegistryDir } from './registry-dir.js';
import { manifestSchema, packId, type BuiltPack, type IndexEntry, type LoadedPack, type PackManifest, type PackProblem } from './types.js';

/** The ToolContract fields exactly, so a contract blob with anything extra is rejected. */
const contractSchema = z.strictObject({
  ref: z.string().min(1),
  version: z.string().min(1),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  output_schema: z.record(z.string(), z.unknown()),
  capabilities: z.array(z.enum(['net', 'fs', 'browser', 'spawn', 'secrets'])),
});

export type ReadPackResult = { ok: true; pack: LoadedPack } | { ok: false; problems: PackProblem[] };

/** Blob reads and digest checks shared across the packs of one pass (packs share contract blobs). */
export type BlobCache = Map<Digest, { text: string } | { problem: PackProblem }>;

/** All readPack needs from a registry: a registry directory, or the blobs of a pack built in memory. */
export type BlobSource = Pick<RegistryDir, 'readBlob'>;

async function checkedBlob(registry: BlobSource, digest: Digest, what: string, cache: BlobCache): Promise<{ text: string } | { problem: PackProblem }> {
  const cached = cache.get(digest);
  if (cached) return cached;
  const text = await registry.readBlob(digest);
  let result: { text: string } | { problem: PackProblem };
  if (text === undefined) {
    result = { problem: { code: 'blob_missing', message: `${what} blob ${digest} is missing`, expected: digest } };
  } else {
    const actual = digestBytes(text);
    result =
      actual === digest
        ? { text }
        : { problem: { code: 'blob_digest_mismatch', message: `${what} blob ${digest} holds other bytes`, expected: digest, actual } };
  }
  cache.set(digest, result);
  return result;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Read one pack by its index entry and check everything: the manifest blob's digest is the indexed
 * digest, the manifest names this pack, every referenced blob exists and hashes to its address,
 * contracts and FlowSpecs decode and are canonical, composite tools name a flow of the pack.
 * Never throws for bad content: every finding is a PackProblem.
 */
export async function readPack(registry: BlobSource, entry: IndexEntry, cache: BlobCache = new Map()): Promise<ReadPackResult> {
  const id = packId(entry.name, entry.version);
  const manifestBlob = await checkedBlob(registry, entry.digest, 'manifest', cache);
  if ('problem' in manifestBlob) return { ok: false, problems: [manifestBlob.problem] };
  const parsed = manifestSchema.safeParse(parseJson(manifestBlob.text));
  if (!parsed.success || digestOf(parsed.data) !== entry.digest) {
    return { ok: false, problems: [{ code: 'manifest_invalid', message: `manifest ${entry.digest} is not a canonical pack manifest` }] };
  }
  const manifest = parsed.data as PackManifest;
  const problems: PackProblem[] = [];
  if (packId(manifest.name, manifest.version) !== id) {
    problems.push({
      code: 'index_mismatch',
      message: `index entry ${id} points at the manifest of ${packId(manifest.name, manifest.version)}`,
      expected: id,
      actual: packId(manifest.name, manifest.version),
    });
  }
  const blobs = new Map<Digest, string>([[entry.digest, manifestBlob.text]]);
  const contracts = new Map<Digest, ToolContract>();
  const specs = new Map<string, FlowSpec>();
  const flowNames = new Set(manifest.flows.map((f) => f.name));

  for (const tool of manifest.tools) {
    const blob = await checkedBlob(registry, tool.contract_digest, `contract ${tool.ref}@${tool.version}`, cache);
    if ('problem' in blob) {
      problems.push(blob.problem);
      continue;
    }
    blobs.set(tool.contract_digest, blob.text);
    const contract = contractSchema.safeParse(parseJson(blob.text));
    if (!contract.success || digestOf(contract.data) !== tool.contract_digest) {
      problems.push({ code: 'contract_invalid', message: `contract ${tool.ref}@${tool.version} is not a canonical tool contract` });
    } else if (contract.data.ref !== tool.ref || contract.data.version !== tool.version) {
      problems.push({ code: 'contract_invalid', message: `contract blob for ${tool.ref}@${tool.version} is ${contract.data.ref}@${contract.data.version}` });
    } else {
      contracts.set(tool.contract_digest, contract.data);
    }
    if (tool.implementation && !flowNames.has(tool.implementation.flow)) {
      problems.push({
        code: 'manifest_invalid',
        message: `tool ${tool.ref}@${tool.version} is implemented by flow "${tool.implementation.flow}", which the pack lacks`,
      });
    }
  }
  for (const flow of manifest.flows) {
    const spec = await checkedBlob(registry, flow.flow_digest, `FlowSpec ${flow.name}`, cache);
    const source = await checkedBlob(registry, flow.source, `source of ${flow.name}`, cache);
    if ('problem' in source) problems.push(source.problem);
    else blobs.set(flow.source, source.text);
    if ('problem' in spec) {
      problems.push(spec.problem);
      continue;
    }
    blobs.set(flow.flow_digest, spec.text);
    const value = parseJson(spec.text) as FlowSpec | undefined;
    if (value?.flowspec !== 1 || value.name !== flow.name || digestOf(value) !== flow.flow_digest) {
      problems.push({ code: 'flowspec_invalid', message: `FlowSpec of ${flow.name} is not a canonical FlowSpec named "${flow.name}"` });
    } else {
      specs.set(flow.name, value);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, pack: { manifest, digest: entry.digest, blobs, contracts, specs } };
}

/** Check a pack built in memory (draft build, export file) with exactly the checks a registry pack gets. */
export async function checkBuiltPack(pack: BuiltPack): Promise<ReadPackResult> {
  const source: BlobSource = { readBlob: async (digest) => pack.blobs.get(digest) };
  return readPack(source, { name: pack.manifest.name, version: pack.manifest.version, digest: pack.digest });
}
