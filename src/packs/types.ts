import { z } from 'zod';
import { DIGEST_PATTERN, type Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import type { ToolContract } from '../tools/types.js';

/**
 * Packs: tool contracts plus flows, identified as `name@version` and by `digest` = digestOf(manifest).
 * The formats here are documented in docs/packs.md; every file the registry holds is one of them.
 */

/** Pack names: lowercase, so `name@version` is also a safe file name on every file system. */
export const PACK_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
/** Pack versions: `MAJOR.MINOR.PATCH` with an optional `-prerelease`. */
export const PACK_VERSION_PATTERN = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

export const MANIFEST_FORMAT = 'flowctl-pack/1';
export const DRAFT_FORMAT = 'flowctl-pack-draft/1';
export const EXPORT_FORMAT = 'flowctl-pack-export/1';

const digest = z.string().regex(DIGEST_PATTERN, 'a sha256:<64 hex> digest') as unknown as z.ZodType<Digest>;
const packName = z.string().regex(PACK_NAME_PATTERN, 'lowercase letters, digits, ".", "_" or "-" (max 100)');
const packVersion = z.string().regex(PACK_VERSION_PATTERN, 'MAJOR.MINOR.PATCH[-prerelease]');

/** How a flow entered the pack: its source blob holds the file as it was added. */
export type SourceKind = 'yaml' | 'recording' | 'flowspec';
const sourceKind = z.enum(['yaml', 'recording', 'flowspec']);

/**
 * One tool of a pack. The contract blob is stored under `contract_digest` (contract blobs are the
 * contract's canonical JSON, so their address is the contract digest).
 * - without `implementation`: the contract of a tool the runtime provides (a built-in); the pack pins
 *   its exact contract and loading fails if the runtime's differs.
 * - with `implementation.flow`: a composite tool run by that flow of the same pack.
 */
export interface PackToolEntry {
  ref: string;
  version: string;
  contract_digest: Digest;
  implementation?: { flow: string };
}

/** One flow of a pack. The FlowSpec blob is stored under `flow_digest`; `source` is the source file's blob. */
export interface PackFlowEntry {
  name: string;
  flow_digest: Digest;
  source: Digest;
  source_kind: SourceKind;
}

/** The canonical manifest. Its canonical JSON is the manifest blob; its digest is the pack digest. */
export interface PackManifest {
  format: typeof MANIFEST_FORMAT;
  name: string;
  version: string;
  description?: string;
  /** Sorted by ref, then version. */
  tools: PackToolEntry[];
  /** Sorted by name. */
  flows: PackFlowEntry[];
}

export const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  name: packName,
  version: packVersion,
  description: z.string().optional(),
  tools: z.array(
    z.strictObject({
      ref: z.string().min(1),
      version: z.string().min(1),
      contract_digest: digest,
      implementation: z.strictObject({ flow: z.string().min(1) }).optional(),
    }),
  ),
  flows: z.array(z.strictObject({ name: z.string().min(1), flow_digest: digest, source: digest, source_kind: sourceKind })),
}) satisfies z.ZodType<PackManifest>;

/** `index/<name>@<version>.json`: one small file per published pack (written once, never changed). */
export interface IndexEntry {
  name: string;
  version: string;
  digest: Digest;
}
export const indexEntrySchema = z.strictObject({ name: packName, version: packVersion, digest });

/** A pack built in memory: the manifest, its digest and every blob it references (manifest included). */
export interface BuiltPack {
  manifest: PackManifest;
  digest: Digest;
  /** digest -> exact bytes (UTF-8 text). */
  blobs: Map<Digest, string>;
}

/** A pack read back from a registry with its decoded contents (used by loaders and install). */
export interface LoadedPack extends BuiltPack {
  contracts: Map<Digest, ToolContract>;
  specs: Map<string, FlowSpec>;
}

/** A tool in the draft: a full contract, plus `implementation` for a composite tool. */
export interface DraftTool {
  ref: string;
  version: string;
  description: string;
  /** Composite tools: derived from the flow's inputs when omitted (must equal the derived one if given). */
  input_schema?: Record<string, unknown>;
  /** Default `{}` (any output) for composite tools. */
  output_schema?: Record<string, unknown>;
  /** Composite tools: derived from the flow's steps when omitted (must equal the derived list if given). */
  capabilities?: ToolContract['capabilities'];
  implementation?: { flow: string };
}

const capability = z.enum(['net', 'fs', 'browser', 'spawn', 'secrets']);
export const draftToolSchema = z.strictObject({
  ref: z.string().regex(/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)+$/, 'a tool ref like "acme/login"'),
  version: z.string().regex(/^\d+\.\d+\.\d+$/, 'MAJOR.MINOR.PATCH'),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  output_schema: z.record(z.string(), z.unknown()).optional(),
  capabilities: z.array(capability).optional(),
  implementation: z.strictObject({ flow: z.string().min(1) }).optional(),
}) satisfies z.ZodType<DraftTool>;

/** A flow in the draft: a snapshot of the source file taken by `pack add`. */
export interface DraftFlow {
  name: string;
  /** The path it was added from, relative to the project (informational). */
  file: string;
  source_kind: SourceKind;
  source: string;
}

/** flowctl.pack.json */
export interface PackDraft {
  format: typeof DRAFT_FORMAT;
  name: string;
  version: string;
  description?: string;
  flows: DraftFlow[];
  tools: DraftTool[];
}
export const draftSchema = z.strictObject({
  format: z.literal(DRAFT_FORMAT),
  name: packName,
  version: packVersion,
  description: z.string().optional(),
  flows: z.array(z.strictObject({ name: z.string().min(1), file: z.string(), source_kind: sourceKind, source: z.string() })),
  tools: z.array(draftToolSchema),
}) satisfies z.ZodType<PackDraft>;

/** `pack export --to <file>`: one self-contained file; `pack publish --body <file>` imports it. */
export interface PackExport {
  format: typeof EXPORT_FORMAT;
  digest: Digest;
  manifest: PackManifest;
  /** digest -> UTF-8 text of every blob except the manifest (which is `manifest`). */
  blobs: Record<string, string>;
}
export const exportSchema = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  digest,
  manifest: z.unknown(),
  blobs: z.record(z.string(), z.string()),
});

/** flowctl.packs.lock, exactly the shape of spec/engine.md. Written by no subcommand. */
export interface PacksLock {
  schema_version: '1.0';
  packs: { name: string; version: string; digest: Digest; tools: { ref: string; contract_digest: Digest }[] }[];
}
export const packsLockSchema = z.strictObject({
  schema_version: z.literal('1.0'),
  packs: z.array(
    z.strictObject({
      name: packName,
      version: packVersion,
      digest,
      tools: z.array(z.strictObject({ ref: z.string().min(1), contract_digest: digest })),
    }),
  ),
}) satisfies z.ZodType<PacksLock>;

/** One thing wrong with a pack, as `registry verify` and `install` report it. */
export interface PackProblem {
  code:
    | 'index_invalid'
    | 'index_mismatch'
    | 'blob_missing'
    | 'blob_digest_mismatch'
    | 'manifest_invalid'
    | 'contract_invalid'
    | 'flowspec_invalid'
    | 'lock_mismatch';
  message: string;
  expected?: string;
  actual?: string;
}

export function packId(name: string, version: string): string {
  return `${name}@${version}`;
}

/** Format zod issues as `path: message` lines for error messages. */
export function zodIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}
