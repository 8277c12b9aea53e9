import { isConnectionError } from './sql-errors.js';

/** One item's outcome in a batch: its value, or the error only that item gets. */
export type ItemResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<I, R> {
  /** Items of one batch have distinct keys (a run id): a later item with a key already in the batch waits for the next one. */
  key(item: I): string;
  /** A rough size in bytes, so one statement stays under `maxBytes` (an item bigger than that goes alone). */
  size(item: I): number;
  maxItems: number;
  maxBytes: number;
  /** Batches in flight at once (each on its own connection). */
  maxInFlight: number;
  /** One statement, hence one transaction, for all items: per item (same order), its result. */
  runBatch(items: I[]): Promise<ItemResult<R>[]>;
  /** The same work for one item alone: used when a batch statement failed as a whole. */
  runOne(item: I): Promise<R>;
}

interface Pending<I, R> {
  item: I;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit (docs/storage-sql.md, "Group commit"): writes submitted while a batch is in flight
 * are sent together as one statement when it returns, so many concurrent runs share one round trip
 * and one commit. A caller's promise settles only after the statement that holds its item returned,
 * i.e. after that transaction committed (or failed): nothing is acknowledged before it is durable.
 *
 * With nothing in flight, a write goes out at once (after the current microtask queue, so writes of
 * the same tick share it): a lone caller waits for no timer.
 *
 * A batch statement that fails as a whole (a check constraint, a deadlock, a run deleted under it)
 * committed nothing, so its items are retried one by one with `runOne`, and each caller gets its own
 * outcome. A failure of the connection itself is given to every item of the batch: whether the
 * commit happened is unknown, so nothing is retried.
 */
export class GroupCommit<I, R> {
  #queue: Pending<I, R>[] = [];
  #inFlight = 0;
  #scheduled = false;
  #idle: Array<() => void> = [];

  constructor(private readonly o: GroupCommitOptions<I, R>) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves when nothing is queued or in flight (dispose waits for this). */
  idle(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0 || this.#inFlight >= this.o.maxInFlight) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  /** Take the next batch: oldest first, one item per key, within the item and byte limits. */
  #take(): Pending<I, R>[] {
    const batch: Pending<I, R>[] = [];
    const keys = new Set<string>();
    const rest: Pending<I, R>[] = [];
    let bytes = 0;
    for (const p of this.#queue) {
      const key = this.o.key(p.item);
      const size = this.o.size(p.item);
      const fits = batch.length < this.o.maxItems && (batch.length === 0 || bytes + size <= this.o.maxBytes);
      if (!fits || keys.has(key)) {
        rest.push(p);
        continue;
      }
      keys.add(key);
      bytes += size;
      batch.push(p);
    }
    this.#queue = rest;
    return batch;
  }

  #flush(): void {
    while (this.#inFlight < this.o.maxInFlight && this.#queue.length > 0) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        if (this.#queue.length > 0) this.#schedule();
        else if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
      });
    }
  }

  async #run(batch: Pending<I, R>[]): Promise<void> {
    let results: ItemResult<R>[];
    try {
      results = batch.length === 1 ? [await settle(this.o.runOne(batch[0]!.item))] : await this.o.runBatch(batch.map((p) => p.item));
    } catch (err) {
      if (isConnectionError(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      // The statement failed as a whole and committed nothing: each item on its own, in order.
      await Promise.all(batch.map((p) => this.o.runOne(p.item).then(p.resolve, p.reject)));
      return;
    }
    batch.forEach((p, i) => {
      const r = results[i]!;
      if (r.ok) p.resolve(r.value);
      else p.reject(r.error);
    });
  }
}

async function settle<R>(promise: Promise<R>): Promise<ItemResult<R>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}
