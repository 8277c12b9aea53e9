/**
 * A durable job queue shared by processes (docs/hosted-api.md, "Queue dispatch"). The hosted service
 * sends one message per queued run and workers in any process receive it. The adapter shipped is
 * pg-boss on Postgres or PGlite (flowctl/adapters/queue-pgboss); every adapter passes
 * `describeQueueConformance` from flowctl/testing.
 *
 * Delivery is **at least once**: a message is delivered again when its handler throws, or when the
 * process holding it stops heart-beating (it was killed, or lost its database) for longer than the
 * adapter's recovery bound. Handlers must therefore be idempotent; the hosted run worker is (a run is
 * executed only while it is `pending`, see src/service/worker.ts).
 */
export interface QueueMessage {
  /** The adapter's id for this message (stable across redeliveries). */
  readonly id: string;
  /** The queue it was sent to. */
  readonly queue: string;
  /** The JSON object given to `send`. */
  readonly data: Readonly<Record<string, unknown>>;
  /** 1 on the first delivery, 2 on the first redelivery, and so on. */
  readonly attempt: number;
}

/**
 * A connection inside the caller's open database transaction (the database the queue keeps its
 * messages in): `executeSql` runs one statement on it and resolves with its rows.
 */
export interface QueueTransaction {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface QueueSendOptions {
  /** Deliver no earlier than this many seconds from now. Default 0. */
  delaySeconds?: number;
  /**
   * Write the message inside this open transaction of the caller, on its connection: the message is
   * stored (and delivered) only when that transaction commits, never when it rolls back, so it
   * commits together with the caller's own writes (a queued run and its message). The queue must
   * exist first: call `ensure(queue)` before opening the transaction.
   */
  transaction?: QueueTransaction;
}

export interface QueueWorkOptions {
  /** Handlers of this worker running at once. Default 1. */
  concurrency?: number;
}

/**
 * Handle one message. Resolve to acknowledge it (it is not delivered again); throw to have it
 * delivered again later (until the adapter's retry limit, after which it is dropped and logged).
 * `signal` aborts when the worker is stopped without waiting.
 */
export type QueueHandler = (message: QueueMessage, signal: AbortSignal) => Promise<void>;

export interface QueueWorker {
  /**
   * Stop taking messages. With `wait` (default true) resolve once the handlers in flight settle,
   * but wait at most `timeoutMs` (default 30 s); messages still held then are delivered again after
   * the recovery bound, elsewhere.
   */
  stop(options?: { wait?: boolean; timeoutMs?: number }): Promise<void>;
}

export interface Queue {
  /** For logs and errors: `pg-boss (postgres)`, `pg-boss (pglite)`. */
  readonly name: string;
  /**
   * The longest a message held by a process that died stays undelivered, in seconds (the adapter's
   * heartbeat interval plus its check interval). Documented, and what tests wait on at most.
   */
  readonly recoveryBoundSeconds: number;
  /** Connect and create what the queue needs (idempotent). Called before the first send or work. */
  start(): Promise<void>;
  /**
   * Create `queue` if it does not exist (idempotent; `send` and `work` call it themselves). Needed
   * before a `send` inside a caller's transaction, which must not wait on another connection.
   */
  ensure(queue: string): Promise<void>;
  /** Durably enqueue `data` (a JSON object) on `queue`. Resolves with the message id once stored. */
  send(queue: string, data: Record<string, unknown>, options?: QueueSendOptions): Promise<string>;
  /**
   * Whether a message of `queue` whose data has these fields (equal values) is waiting or held by a
   * handler: sent and committed, not yet acknowledged, nor dropped after its last retry. The hosted
   * service's orphan sweep asks it of a queued run before failing it (docs/hosted-api.md).
   */
  has(queue: string, match: Record<string, string>): Promise<boolean>;
  /** Receive messages of `queue` in this process until the returned worker is stopped. */
  work(queue: string, options: QueueWorkOptions, handler: QueueHandler): Promise<QueueWorker>;
  /** Stop every worker (waiting as `QueueWorker.stop` does) and release connections. Idempotent. */
  stop(): Promise<void>;
}
