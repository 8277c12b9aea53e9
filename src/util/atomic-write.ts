import { link, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

// Temp names only need to be unique among concurrent writers: pid + a per-process counter is, and
// keeps the core free of randomness. Readers skip every name starting with TEMP_PREFIX.
export const TEMP_PREFIX = '.tmp-';
let counter = 0;

function tempPathFor(path: string): string {
  counter += 1;
  return join(dirname(path), `${TEMP_PREFIX}${process.pid}-${counter}-${basename(path)}`);
}

async function writeTemp(path: string, data: string | Uint8Array): Promise<string> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** fsync a directory so a rename or link inside it survives a power loss, not only a process kill. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Atomic file writes shared by the fs storage and the pack registry. Temp files are written beside
 * their target (same file system, so rename is atomic) under TEMP_PREFIX, which every directory
 * reader skips; a writer killed at any moment leaves the old file or the new one, never half of one.
 */

/** Replace `path` atomically: temp file in the same directory, fsync, rename. Readers see old or new, never half. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = await writeTemp(path, data);
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

/**
 * Create `path` atomically only if it does not exist. A hard link fails with EEXIST instead of
 * replacing (rename would replace), so of two concurrent writers exactly one wins.
 * Returns false when the file already existed (nothing written).
 */
export async function createFileExclusive(path: string, data: string | Uint8Array): Promise<boolean> {
  const temp = await writeTemp(path, data);
  try {
    await link(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** writeFileAtomic, then fsync the directory: the new file also survives a power loss, not only a kill. */
export async function writeFileDurable(path: string, data: string | Uint8Array): Promise<void> {
  await writeFileAtomic(path, data);
  await syncDir(dirname(path));
}
