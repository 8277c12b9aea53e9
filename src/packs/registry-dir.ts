import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { digestBytes, type Digest } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import { createFileExclusive, syncDir, TEMP_PREFIX, writeFileAtomic } from '../util/atomic-write.js';
import { indexEntrySchema, packId, type IndexEntry } from './types.js';

/**
 * A registry is a directory:
 *   blobs/sha256/<hex>            content-addressed, immutable (manifests, contracts, FlowSpecs, sources)
 *   index/<name>@<version>.json   {name, version, digest}, created once, never rewritten
 * One index file per pack means concurrent publishes of different packs never touch the same file.
 */
export interface RegistryDir {
  readonly dir: string;
  blobPath(digest: Digest): string;
  /** The blob's text, or undefined when absent. */
  readBlob(digest: Digest): Promise<string | undefined>;
  /** Write blobs (skipping ones already present and intact), then fsync the blob directory. */
  putBlobs(blobs: Iterable<[Digest, string]>): Promise<void>;
  /** All index entries; unreadable ones are returned as `{id, error}` so verify can name them. */
  listIndex(): Promise<IndexListing[]>;
  readIndexEntry(name: string, version: string): Promise<IndexListing | undefined>;
  /** Create the index entry if absent. Returns the entry already there when one exists (nothing written). */
  putIndexEntry(entry: IndexEntry): Promise<IndexEntry | undefined>;
}

export type IndexListing = { id: string; entry: IndexEntry } | { id: string; error: string };

const COMPONENT = 'packs';

function hexOf(digest: Digest): string {
  return digest.slice('sha256:'.length);
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parseIndexFile(id: string, text: string): IndexListing {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { id, error: 'index entry is not JSON' };
  }
  const parsed = indexEntrySchema.safeParse(json);
  if (!parsed.success) return { id, error: `index entry is invalid: ${parsed.error.issues[0]?.message ?? 'bad shape'}` };
  if (packId(parsed.data.name, parsed.data.version) !== id) {
    return { id, error: `index file ${id}.json names ${packId(parsed.data.name, parsed.data.version)}` };
  }
  return { id, entry: parsed.data };
}

/**
 * Open a registry directory. With `create`, missing directories are made (publish, install, mirror
 * destination); without it a missing registry is FlowError `registry_not_found`.
 */
export async function openRegistry(dir: string, options: { create?: boolean } = {}): Promise<RegistryDir> {
  const blobDir = join(dir, 'blobs', 'sha256');
  const indexDir = join(dir, 'index');
  if (options.create) {
    await mkdir(blobDir, { recursive: true });
    await mkdir(indexDir, { recursive: true });
  } else if (!(await isDirectory(blobDir)) || !(await isDirectory(indexDir))) {
    throw new FlowError('registry_not_found', prefixed(COMPONENT, `no registry at ${dir} (expected blobs/sha256/ and index/)`), {
      data: { dir },
    });
  }

  const blobPath = (digest: Digest) => join(blobDir, hexOf(digest));

  return {
    dir,
    blobPath,
    readBlob: (digest) => readOptional(blobPath(digest)),
    async putBlobs(blobs) {
      // Blobs are independent files: write them concurrently so their fsyncs overlap.
      const wrote = await Promise.all(
        [...blobs].map(async ([digest, text]) => {
          const existing = await readOptional(blobPath(digest));
          // A present blob is immutable; one whose bytes no longer match its name was damaged, so replace it.
          if (existing !== undefined && digestBytes(existing) === digest) return false;
          await writeFileAtomic(blobPath(digest), text);
          return true;
        }),
      );
      if (wrote.includes(true)) await syncDir(blobDir);
    },
    async listIndex() {
      const names = (await readdir(indexDir)).filter((n) => n.endsWith('.json') && !n.startsWith(TEMP_PREFIX)).sort();
      const out: IndexListing[] = [];
      for (const file of names) {
        const id = file.slice(0, -'.json'.length);
        const text = await readOptional(join(indexDir, file));
        if (text !== undefined) out.push(parseIndexFile(id, text));
      }
      return out;
    },
    async readIndexEntry(name, version) {
      const id = packId(name, version);
      const text = await readOptional(join(indexDir, `${id}.json`));
      return text === undefined ? undefined : parseIndexFile(id, text);
    },
    async putIndexEntry(entry) {
      const id = packId(entry.name, entry.version);
      const path = join(indexDir, `${id}.json`);
      const body = `${JSON.stringify({ digest: entry.digest, name: entry.name, version: entry.version }, null, 2)}\n`;
      if (await createFileExclusive(path, body)) {
        await syncDir(indexDir);
        return undefined;
      }
      const existing = parseIndexFile(id, (await readOptional(path)) ?? '');
      if ('error' in existing) {
        throw new FlowError('registry_corrupt', prefixed(COMPONENT, `${id}: ${existing.error}`), { data: { pack: id } });
      }
      return existing.entry;
    },
  };
}

/** `registry ls`: every index entry (unreadable ones with their error), sorted by name@version. */
export async function listRegistry(dir: string): Promise<IndexListing[]> {
  return (await openRegistry(dir)).listIndex();
}
