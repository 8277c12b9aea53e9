import { PGliteDialect, type DatabaseConnection, type Driver, type PGliteDialectConfig, type TransactionSettings } from 'kysely';
import type { QueryCompiler } from 'kysely';

/**
 * Kysely's PGlite driver hands every caller the one connection, and while a transaction is open
 * that connection sends every query into it: a concurrent query of another caller would join (and
 * roll back with) the transaction, and a second transaction begun meanwhile deadlocks the first.
 * This dialect lends the connection to one holder at a time (a query, or a whole transaction), in
 * the order they asked, so concurrent callers of one SQL storage wait their turn instead.
 */
export class SerialPGliteDialect extends PGliteDialect {
  constructor(config: PGliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new SerialDriver(super.createDriver());
  }
}

/** A FIFO lock: `acquire` resolves with the function that releases it. */
export class FifoLock {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => turn);
    return ready;
  }
}

class SerialDriver implements Driver {
  readonly #inner: Driver;
  readonly #lock = new FifoLock();
  readonly #held = new Map<DatabaseConnection, () => void>();

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.#lock.acquire();
    try {
      const connection = await this.#inner.acquireConnection();
      // One connection object for every holder: the map holds at most one entry at a time.
      this.#held.set(connection, release);
      return connection;
    } catch (err) {
      release();
      throw err;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      const release = this.#held.get(connection);
      this.#held.delete(connection);
      release?.();
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.#inner.savepoint!(connection, name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.#inner.rollbackToSavepoint!(connection, name, compileQuery);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await this.#inner.releaseSavepoint!(connection, name, compileQuery);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}
