import pg from 'pg';
import { sha256Hex } from '../../src/canonical.js';

/**
 * Wakes journal watchers when an append commits. Appends send `pg_notify(channel, '<run_id>:<seq>')`
 * in the same statement as the insert, so the signal is delivered only on commit. A wake is only a
 * hint: the watcher re-reads the journal by seq, so a lost or duplicated notification never causes
 * a gap or a repeat.
 */
export interface JournalNotifier {
  /** Resolves once the subscription is live: every append committed afterwards wakes `wake`. */
  subscribe(runId: string, wake: () => void): Promise<() => void>;
  /** Re-establish the subscription if the connection behind it was lost (no-op when live). */
  live(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One channel per storage schema, so two test runs (or tenants) on one server do not wake each other.
 * Always a plain lowercase identifier: PGlite's `listen` splices the name into `LISTEN` unquoted.
 */
export function channelName(schema: string | undefined): string {
  if (schema === undefined) return 'flowctl_journal';
  // Postgres truncates identifiers (channel names) to 63 bytes; other names are hashed.
  return /^[a-z0-9_]{1,40}$/.test(schema) ? `flowctl_journal_${schema}` : `flowctl_journal_${sha256Hex(schema).slice(0, 32)}`;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

class Wakers {
  #byRun = new Map<string, Set<() => void>>();

  add(runId: string, wake: () => void): () => void {
    let set = this.#byRun.get(runId);
    if (!set) this.#byRun.set(runId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.#byRun.get(runId) === set) this.#byRun.delete(runId);
    };
  }

  /** Add a waker, then make sure the listener is live; a failed start takes the waker back. */
  async subscribe(runId: string, wake: () => void, live: () => Promise<void>): Promise<() => void> {
    const remove = this.add(runId, wake);
    try {
      await live();
    } catch (err) {
      remove();
      throw err;
    }
    return remove;
  }

  dispatch(payload: string): void {
    const runId = payload.slice(0, payload.lastIndexOf(':'));
    for (const wake of this.#byRun.get(runId) ?? []) wake();
  }

  wakeAll(): void {
    for (const set of this.#byRun.values()) for (const wake of set) wake();
  }

  get size(): number {
    return this.#byRun.size;
  }
}

/**
 * LISTEN on a dedicated pg client (not a pool slot: a pool of size 1 must still serve queries),
 * opened on the first watch and closed on dispose. If that connection drops, every watcher is
 * woken to re-read and the next `live()` reconnects; until then watchers fall back to their poll.
 */
export class PgJournalNotifier implements JournalNotifier {
  #wakers = new Wakers();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly mapError: (err: unknown) => Error,
  ) {}

  subscribe(runId: string, wake: () => void): Promise<() => void> {
    return this.#wakers.subscribe(runId, wake, () => this.live());
  }

  live(): Promise<void> {
    if (this.#closed) return Promise.reject(this.mapError(new Error('Connection terminated: storage disposed')));
    if (this.#client) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.config);
    const drop = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => {});
      this.#wakers.wakeAll();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (msg) => {
      if (msg.channel === this.channel && msg.payload !== undefined) this.#wakers.dispatch(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch (err) {
      client.end().catch(() => {});
      throw this.mapError(err);
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.end().catch(() => {});
    this.#wakers.wakeAll(); // waiting watchers find the storage disposed at once, not after their poll
  }
}

/** The part of a PGlite instance the notifier uses. */
export interface PGliteListenable {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * PGlite has one connection, so NOTIFY from our own appends comes back on it: `listen` delivers
 * them after the appending statement. Watchers in the same process are all PGlite can have (its data
 * folder is opened by one process), hence `crossProcessWatch: false`.
 */
export class PGliteJournalNotifier implements JournalNotifier {
  #wakers = new Wakers();
  #unlisten: Promise<() => Promise<void>> | undefined;

  constructor(
    private readonly pglite: () => PGliteListenable,
    private readonly channel: string,
  ) {}

  subscribe(runId: string, wake: () => void): Promise<() => void> {
    return this.#wakers.subscribe(runId, wake, () => this.live());
  }

  live(): Promise<void> {
    this.#unlisten ??= this.pglite().listen(this.channel, (payload) => this.#wakers.dispatch(payload));
    return this.#unlisten.then(() => undefined);
  }

  async close(): Promise<void> {
    const unlisten = await this.#unlisten?.catch(() => undefined);
    this.#unlisten = undefined;
    await unlisten?.().catch(() => {});
    this.#wakers.wakeAll();
  }
}
