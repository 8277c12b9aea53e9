import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { PGliteInstance } from './driver-types.js';
import { PGLITE_THREAD_SOURCE } from './pglite-thread-source.js';

/**
 * PGlite on its own thread. PGlite runs Postgres as WebAssembly in the thread that calls it, and a
 * statement holds that thread until it is done (1-3 ms for a journal append, 10-20 ms for a pg-boss
 * poll, measured on 2 cores): on the service's only thread, that is time the run's browser messages
 * and HTTP requests wait. Here PGlite lives in a worker thread and this proxy forwards what flowctl,
 * kysely and pg-boss call (`query`, `exec`, `transaction`, `listen`, `close`), so the main thread only
 * sends and receives messages. Results and errors come back by structured clone; an error keeps its
 * SQLSTATE `code` and other fields, so sql-errors.ts reads it as it reads PGlite's own.
 *
 * The thread holds the process open only while a call waits for it, as PGlite in the main thread
 * would: a storage nobody disposed does not keep a finished program alive.
 */

interface ErrorFields {
  message: string;
  name?: string;
  stack?: string;
  [field: string]: unknown;
}
type FromThread =
  | { op: 'ready'; error?: ErrorFields }
  | { op: 'notify'; listen: number; payload: string }
  | { id: number; value?: unknown; error?: ErrorFields };

interface Results {
  rows: unknown[];
  fields: unknown[];
  affectedRows?: number;
}

interface Transaction {
  readonly closed: boolean;
  query(sql: string, params?: unknown[], options?: object): Promise<Results>;
  exec(sql: string): Promise<Results[]>;
}

/** SQLSTATE 57P02 crash_shutdown: isConnectionError reads a lost thread as a database that went away. */
const THREAD_LOST = '57P02';

function toError(fields: ErrorFields): Error {
  const err = new Error(fields.message);
  Object.assign(err, fields);
  if (fields.stack) err.stack = `${fields.stack}\n    at (PGlite thread)`;
  return err;
}

function pgliteModulePath(): string {
  // The CJS build has __filename and an empty import.meta; ESM has import.meta.url.
  const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
  return require.resolve('@electric-sql/pglite');
}

export class PGliteThread implements PGliteInstance {
  readonly dataDir: string | undefined;
  readonly waitReady: Promise<void>;
  #worker: Worker;
  #nextId = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  #listeners = new Map<number, (payload: string) => void>();
  #nextListen = 1;
  #ready = false;
  #closed = false;
  #lost: Error | undefined;

  constructor(dataDir: string | undefined) {
    this.dataDir = dataDir;
    this.#worker = new Worker(PGLITE_THREAD_SOURCE, {
      eval: true,
      workerData: { module: pgliteModulePath(), dataDir },
      name: 'flowctl-pglite',
    });
    this.#worker.unref();
    let settle: { resolve: () => void; reject: (err: Error) => void } | undefined;
    this.waitReady = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.waitReady.catch(() => {}); // read by whoever waits; a failed open also fails every call
    this.#worker.on('message', (message: FromThread) => {
      if ('op' in message && message.op === 'ready') {
        if (message.error) return settle?.reject(toError(message.error));
        this.#ready = true;
        return settle?.resolve();
      }
      if ('op' in message && message.op === 'notify') return this.#listeners.get(message.listen)?.(message.payload);
      const call = this.#pending.get(message.id);
      if (!call) return;
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (message.error) call.reject(toError(message.error));
      else call.resolve(message.value);
    });
    const lose = (why: string) => {
      const err = Object.assign(new Error(`PGlite thread stopped: ${why}`), { code: THREAD_LOST });
      this.#lost ??= err;
      this.#closed = true;
      settle?.reject(err);
      for (const call of this.#pending.values()) call.reject(err);
      this.#pending.clear();
    };
    this.#worker.on('error', (err) => lose(err.message));
    this.#worker.on('exit', (code) => lose(`exited with code ${code}`));
  }

  get ready(): boolean {
    return this.#ready;
  }

  get closed(): boolean {
    return this.#closed;
  }

  #call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.#lost) return Promise.reject(this.#lost);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.#worker.postMessage({ ...message, id });
      } catch (err) {
        // A value structured clone cannot send (a function in the parameters).
        this.#pending.delete(id);
        if (this.#pending.size === 0) this.#worker.unref();
        reject(err as Error);
      }
    });
  }

  query(sql: string, params?: unknown[], options?: object): Promise<Results> {
    return this.#call({ op: 'query', sql, params, options });
  }

  exec(sql: string): Promise<Results[]> {
    return this.#call({ op: 'exec', sql });
  }

  /**
   * PGlite's exclusive transaction, held in the thread while `callback` runs here: statements of
   * `tx` run inside it, and every other statement waits for it, as on PGlite itself. Commits when
   * the callback resolves, rolls back when it throws (and rethrows).
   */
  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    const txId = await this.#call<number>({ op: 'begin' });
    let over = false;
    const tx: Transaction = {
      get closed() {
        return over;
      },
      query: (sql, params, options) => this.#call({ op: 'query', tx: txId, sql, params, options }),
      exec: (sql) => this.#call({ op: 'exec', tx: txId, sql }),
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (err) {
      over = true;
      await this.#call({ op: 'end', tx: txId, commit: false }).catch(() => {});
      throw err;
    }
    over = true;
    await this.#call({ op: 'end', tx: txId, commit: true });
    return result;
  }

  async listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    const id = this.#nextListen++; // names the subscription in the thread's notify messages
    this.#listeners.set(id, callback);
    try {
      await this.#call({ op: 'listen', listen: id, channel });
    } catch (err) {
      this.#listeners.delete(id);
      throw err;
    }
    return async () => {
      if (!this.#listeners.delete(id) || this.#lost) return;
      await this.#call({ op: 'unlisten', listen: id });
    };
  }

  /** Closes PGlite (it writes its data folder) and ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#call({ op: 'close' });
    } finally {
      this.#closed = true;
      this.#listeners.clear();
      await this.#worker.terminate();
    }
  }
}
