import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pidAlive, TEMP_PREFIX, tempWriterPid } from '../../src/util/atomic-write.js';
import { isCode, RUN_ID } from './fs-util.js';

/**
 * The store's unfinished runs: `unfinished/<id>/`, an empty folder per run from its create until the
 * store has written its terminal header (the engine's last update, or a list that reads the run as
 * terminal, after its repair from the journal). Recovery lists the non-terminal runs at every engine start (each `flowctl run`, `flowctl serve`):
 * with this index it reads those runs only, not every run the project ever kept (1,500 runs cost a
 * `flowctl run` about 0.5 s before it, docs/journal.md "Unfinished runs").
 *
 * Every run that is not finished has its folder: the folder is made before the run's header, and
 * removed only once the run reads as terminal, which it then stays. A store made before the index is
 * indexed by its first init (a full scan, built aside and renamed into place whole).
 */
export interface UnfinishedIndex {
  /** Build the index from `scan` (the ids of the runs not finished) when the store has none yet. */
  ensure(scan: () => Promise<string[]>): Promise<void>;
  /** A run was created. Without an index yet (a store not initialized), the next ensure() finds it. */
  add(id: string): Promise<void>;
  /** The run reads as terminal; best effort (a folder left behind is removed by the next list). */
  remove(id: string): Promise<void>;
  /** The indexed ids, or undefined when the store has no index (not initialized). */
  ids(): Promise<string[] | undefined>;
}

let buildCounter = 0;

export function createUnfinishedIndex(root: string): UnfinishedIndex {
  const dir = join(root, 'unfinished');

  /** Builds a killed writer left aside (`.tmp-<pid>-<n>-unfinished` in the root). */
  async function removeDeadBuilds(): Promise<void> {
    for (const name of await readdir(root)) {
      const pid = name.endsWith('-unfinished') ? tempWriterPid(name, ['prefix']) : undefined;
      if (pid !== undefined && !pidAlive(pid)) await rm(join(root, name), { recursive: true, force: true });
    }
  }

  return {
    async ensure(scan) {
      try {
        await stat(dir);
        return;
      } catch (err) {
        if (!isCode(err, 'ENOENT')) throw err;
      }
      await removeDeadBuilds();
      buildCounter += 1;
      const build = join(root, `${TEMP_PREFIX}${process.pid}-${buildCounter}-unfinished`);
      await mkdir(build);
      try {
        for (const id of await scan()) await mkdir(join(build, id));
        // Whole or not at all. Another process that built it first wins (a folder with runs in it is
        // never replaced); both scanned the same runs, and runs created since are in its index.
        await rename(build, dir);
      } catch (err) {
        if (!isCode(err, 'ENOTEMPTY') && !isCode(err, 'EEXIST')) throw err;
      } finally {
        await rm(build, { recursive: true, force: true });
      }
    },

    async add(id) {
      try {
        await mkdir(join(dir, id));
      } catch (err) {
        if (isCode(err, 'EEXIST') || isCode(err, 'ENOENT')) return;
        throw err;
      }
    },

    async remove(id) {
      await rmdir(join(dir, id)).catch(() => undefined);
    },

    async ids() {
      try {
        return (await readdir(dir)).filter((name) => RUN_ID.test(name));
      } catch (err) {
        if (isCode(err, 'ENOENT')) return undefined;
        throw err;
      }
    },
  };
}
