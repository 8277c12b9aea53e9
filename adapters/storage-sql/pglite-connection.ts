import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { PGlite as KyselyPGlite } from 'kysely';
import { FlowError, prefixed } from '../../src/errors.js';
import type { PGliteInstance } from './driver-types.js';
import { PGliteThread } from './pglite-thread.js';

export interface PGliteConnection {
  /** The instance, opened on first call (so a storage that is never used never creates its folder). */
  instance(): PGliteInstance;
  /** What kysely drives: the instance, or for a borrowed one a view whose close() is a no-op. */
  forKysely(): KyselyPGlite;
  dataDir: string | undefined;
  /** Closes what we opened and releases the data folder lock. */
  close(): Promise<void>;
}

export function isPGliteInstance(value: unknown): value is PGlite {
  return typeof value === 'object' && value !== null && typeof (value as PGlite).query === 'function' && 'waitReady' in value;
}

/**
 * PGlite itself lets two processes (or two instances in one process) open one data folder, which
 * corrupts it. `<dataDir>.lock` holds the pid of the process using the folder; a lock left by a dead
 * process (after SIGKILL) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(lockPath, 'utf8') === String(process.pid)) unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new FlowError(
          'db_locked',
          prefixed(
            'storage-sql',
            `PGlite data folder ${dataDir} is in use by process ${holder}; stop it, or delete ${lockPath} if that process is not flowctl`,
          ),
          { data: { dataDir, pid: holder } },
        );
      }
      unlinkSync(lockPath);
    }
  }
  throw new FlowError('db_locked', prefixed('storage-sql', `could not lock PGlite data folder ${dataDir}`), { data: { dataDir } });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite in `dataDir` (created on first use), or in memory without one. The folder is locked at once.
 * `thread` (default true): PGlite runs in a worker thread (pglite-thread.ts), not in the caller's.
 */
export function openPGlite(options: { dataDir?: string; thread?: boolean }): PGliteConnection {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  let unlock = () => {};
  if (dataDir !== undefined) {
    mkdirSync(dirname(dataDir), { recursive: true });
    unlock = lockDataDir(dataDir);
  }
  let pglite: PGlite | PGliteThread | undefined;
  const open = () => (pglite ??= options.thread === false ? new PGlite(dataDir) : new PGliteThread(dataDir));
  return {
    instance: () => open() as unknown as PGliteInstance,
    forKysely: () => open() as unknown as KyselyPGlite,
    dataDir,
    async close() {
      try {
        if (pglite && !pglite.closed) {
          await pglite.waitReady.catch(() => {});
          await pglite.close();
        }
      } finally {
        unlock();
      }
    },
  };
}

/** A PGlite the caller made stays theirs: kysely's destroy() must not close it. */
export function borrowPGlite(pglite: PGlite): PGliteConnection {
  const view: KyselyPGlite = {
    get closed() {
      return pglite.closed;
    },
    get ready() {
      return pglite.ready;
    },
    get waitReady() {
      return pglite.waitReady;
    },
    query: (query, params, options) => pglite.query(query, params, options) as never,
    transaction: (callback) => pglite.transaction(callback as never) as never,
    close: async () => {},
  };
  return { instance: () => pglite as unknown as PGliteInstance, forKysely: () => view, dataDir: pglite.dataDir, close: async () => {} };
}
