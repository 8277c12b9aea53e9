import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { FlowError } from '../../src/errors.js';

export const COMPONENT = 'storage-fs';

export function fsError(message: string, cause?: unknown, code = 'storage_error'): FlowError {
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return new FlowError(code, `[flowctl] [${COMPONENT}] ${message}${detail}`, { cause });
}

export function isCode(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

/** What a run id may be: the name of its folder in runs/ and in unfinished/. */
export const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether `path` exists (any other error than ENOENT is thrown). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isCode(err, 'ENOENT')) return false;
    throw err;
  }
}

/** Read and parse a JSON file; undefined when it does not exist. */
export async function readJson<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    throw fsError(`cannot read ${path}`, err);
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw fsError(`${path} is not valid JSON`, err, 'storage_corrupt');
  }
}

/**
 * Resolve after a change under `path` (fs.watch), an in-process `wake`, `ms` milliseconds (a
 * fallback poll: fs.watch can miss events, e.g. on network file systems), or abort.
 */
export function waitForChange(path: string, ms: number, signal: AbortSignal | undefined, onWake: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      watcher?.close();
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = onWake(done);
    try {
      watcher = watch(path, { persistent: false }, done);
      watcher.on('error', done);
    } catch {
      // The directory may not exist yet; the poll timer still wakes us.
    }
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}
