import { link, open, readdir, rename, unlink } from 'node:fs/promises';
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

/**
 * Temp files of writers that died (SIGKILL between writing the temp and renaming it) stay behind;
 * they are removed on the next open of their directory. Two name styles carry the writer's pid:
 *
 *   prefix  `.tmp-<pid>-<n>-<name>`   writeFileAtomic / createFileExclusive (stores, packs)
 *   dot     `.<name>.<pid>.<n>.tmp`   the fs/write tool and Recording files (beside user files)
 *
 * A temp is stale when its writer's pid is not alive on this host. A live writer's temp (this
 * process's included) is never removed; a pid reused by an unrelated live process only delays the
 * removal. Writers sharing a directory must share a pid namespace (one host, one container), as the
 * pid is the only liveness evidence a temp name carries.
 */
export type TempStyle = 'prefix' | 'dot';

const PREFIX_TEMP = /^\.tmp-(\d+)-\d+-/;
const DOT_TEMP = /^\..+\.(\d+)\.\d+\.tmp$/;

/** The pid in a temp file name of the given styles, or undefined when the name is not such a temp. */
export function tempWriterPid(name: string, styles: readonly TempStyle[] = ['prefix', 'dot']): number | undefined {
  const m = (styles.includes('prefix') ? PREFIX_TEMP.exec(name) : null) ?? (styles.includes('dot') ? DOT_TEMP.exec(name) : null);
  if (!m) return undefined;
  const pid = Number(m[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remove the temp files in `dir` (not recursive) whose writer is dead. Returns the names removed.
 * A directory that does not exist has none. Errors other than a temp vanishing meanwhile propagate.
 */
export async function removeStaleTemps(dir: string, styles: readonly TempStyle[] = ['prefix', 'dot']): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = tempWriterPid(name, styles);
    if (pid === undefined || pidAlive(pid)) continue;
    try {
      await unlink(join(dir, name));
      removed.push(name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return removed;
}
