import { fromPglite, PgBoss, type ConstructorOptions, type Job } from 'pg-boss';
import type pg from 'pg';
import { FlowError, prefixed } from '../../src/errors.js';
import type { Logger } from '../../src/ports/clock.js';
import type { Queue, QueueHandler, QueueSendOptions, QueueWorker, QueueWorkOptions } from '../../src/ports/queue.js';
import type { PGliteInstance, SqlConnectionInfo } from '../storage-sql/driver-types.js';
import { isConnectionError } from '../../src/util/connection-errors.js';

/**
 * The Queue port on pg-boss (docs/hosted-api.md, "Queue dispatch"): a durable queue in Postgres
 * tables of its own schema, shared by every process on the database; on PGlite the same tables in
 * the embedded database (one process). Workers heart-beat the messages they hold; a message whose
 * holder stops heart-beating (SIGKILL, a lost connection) for `heartbeatSeconds` is failed by the
 * next check of any process and delivered again: the recovery bound is about
 * `heartbeatSeconds + 2 x checkIntervalSeconds + retryDelaySeconds`.
 *
 * LISTEN/NOTIFY wakes a waiting worker as soon as a message is sent (Postgres, and in-process on
 * PGlite); polling every `pollingIntervalSeconds` stays as the floor.
 */
export interface PgBossQueueOptions {
  /** Share the database of this SQL storage (its PGlite instance, or its Postgres settings with a pool of the queue's own). */
  storage?: { connection(): SqlConnectionInfo; readonly schema?: string };
  /** Or a Postgres URL. */
  databaseUrl?: string;
  /** Or a PGlite instance (the caller keeps it: stop() does not close it). */
  pglite?: PGliteInstance;
  /** The schema of the queue's tables. Default `pgboss`, or `<storage schema>_pgboss` when the storage has a schema. */
  schema?: string;
  /** Postgres pool size of the queue. Default 4. */
  poolSize?: number;
  /** A held message is failed and redelivered after this long without a heartbeat. Default 10 (pg-boss's minimum). */
  heartbeatSeconds?: number;
  /** How often each process checks for messages whose holder stopped heart-beating. Default 2. */
  checkIntervalSeconds?: number;
  /** Idle polling floor (LISTEN/NOTIFY wakes workers sooner). Default 1. */
  pollingIntervalSeconds?: number;
  /** Redeliveries after a handler throws or a holder dies, before the message is dropped. Default 5. */
  retryLimit?: number;
  /** Seconds before a redelivery (doubling each time, with jitter). Default 1. */
  retryDelaySeconds?: number;
  /** A message held longer than this is failed and redelivered even while heart-beating. Default 3600. */
  maxHoldSeconds?: number;
  logger?: Logger;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function positive(name: string, value: number | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (min === 0 && value <= 0)) {
    throw new FlowError(
      'invalid_options',
      prefixed('queue-pgboss', `${name} must be a number ${min > 0 ? `of at least ${min}` : 'above 0'}, got ${String(value)}`),
    );
  }
  return value;
}

export interface PgBossQueue extends Queue {
  /**
   * For tests: stop at once as a killed process would, settling nothing: the messages its handlers
   * hold stay taken until their heartbeats lapse, then another process gets them.
   */
  crash(): Promise<void>;
}

/**
 * pg-boss's 'error' events as warnings (its worker errors are plain objects with a `message`).
 * While the database is away every poll, heartbeat and supervision pass fails, several a second per
 * process: the first connection error is logged, then at most one every 10 s with the count of the
 * others. Other errors are logged each time.
 */
function throttledWarn(logger: Logger | undefined): (err: unknown) => void {
  let last = 0;
  let quiet = 0;
  return (err) => {
    if (!logger) return;
    const message = (err as { message?: unknown } | null)?.message;
    const text = typeof message === 'string' && message !== '' ? message : String((err as { code?: unknown } | null)?.code ?? err);
    if (!isConnectionError(err)) {
      logger.warn(`[flowctl] [queue-pgboss] ${text}`);
      return;
    }
    const now = Date.now();
    if (now - last < 10_000) {
      quiet++;
      return;
    }
    logger.warn(`[flowctl] [queue-pgboss] database unreachable: ${text}${quiet > 0 ? ` (and ${quiet} more connection errors since the last report)` : ''}`);
    last = now;
    quiet = 0;
  };
}

export function createPgBossQueue(options: PgBossQueueOptions): PgBossQueue {
  const given = [options.storage, options.databaseUrl, options.pglite].filter((v) => v !== undefined).length;
  if (given !== 1)
    throw new FlowError(
      'invalid_options',
      prefixed('queue-pgboss', `give exactly one of storage, databaseUrl or pglite (got ${given === 0 ? 'none' : 'several'})`),
    );
  const heartbeatSeconds = positive('heartbeatSeconds', options.heartbeatSeconds, 10, 10);
  const checkIntervalSeconds = Math.ceil(positive('checkIntervalSeconds', options.checkIntervalSeconds, 2, 1));
  const pollingIntervalSeconds = positive('pollingIntervalSeconds', options.pollingIntervalSeconds, 1, 0.5);
  const retryLimit = options.retryLimit ?? 5;
  if (typeof retryLimit !== 'number' || !Number.isInteger(retryLimit) || retryLimit < 0) {
    throw new FlowError(
      'invalid_options',
      prefixed('queue-pgboss', `retryLimit must be a whole number of at least 0 (0: never redeliver), got ${String(retryLimit)}`),
    );
  }
  const retryDelaySeconds = positive('retryDelaySeconds', options.retryDelaySeconds, 1, 1);
  const maxHoldSeconds = positive('maxHoldSeconds', options.maxHoldSeconds, 3600, 1);
  const poolSize = positive('poolSize', options.poolSize, 4, 1);
  const schema = options.schema ?? (options.storage?.schema ? `${options.storage.schema}_pgboss`.slice(0, 63) : 'pgboss');
  if (!SCHEMA_NAME.test(schema))
    throw new FlowError(
      'invalid_options',
      prefixed('queue-pgboss', `schema must be a lower-case SQL name (letters, digits, _), got ${JSON.stringify(schema)}`),
    );
  const logger = options.logger;

  const connection =
    options.storage?.connection() ??
    (options.pglite
      ? { driver: 'pglite' as const, pglite: options.pglite }
      : { driver: 'postgres' as const, clientConfig: { connectionString: options.databaseUrl } });
  const common: ConstructorOptions = {
    schema,
    useListenNotify: true,
    superviseIntervalSeconds: checkIntervalSeconds,
    monitorIntervalSeconds: checkIntervalSeconds,
    // Schedules are the hosted service's own (claims per fire time); pg-boss's cron stays off.
    schedule: false,
    registerInstance: false,
    openTelemetry: { enabled: false },
  };
  let boss: PgBoss;
  if (connection.driver === 'pglite') {
    boss = new PgBoss({ ...common, backend: 'pglite', db: fromPglite(connection.pglite as never) });
  } else {
    const c = connection.clientConfig as pg.ClientConfig;
    const pick = <K extends keyof pg.ClientConfig>(k: K) => (c[k] === undefined ? {} : { [k]: c[k] });
    boss = new PgBoss({
      ...common,
      ...pick('connectionString'),
      ...pick('host'),
      ...pick('port'),
      ...pick('user'),
      ...pick('database'),
      ...pick('ssl'),
      ...(typeof c.password === 'string' || typeof c.password === 'function' ? { password: c.password as string } : {}),
      max: poolSize,
      application_name: 'flowctl-queue',
    } as ConstructorOptions);
  }
  boss.on('error', throttledWarn(logger));

  let started: Promise<void> | undefined;
  let stopped = false;
  const queues = new Map<string, Promise<void>>();
  const workers = new Set<PgBossWorker>();

  const start = (): Promise<void> => {
    if (stopped) return Promise.reject(new FlowError('queue_stopped', prefixed('queue-pgboss', 'the queue was stopped')));
    started ??= boss.start().then(
      () => undefined,
      (err: unknown) => {
        started = undefined;
        throw new FlowError('queue_unavailable', prefixed('queue-pgboss', `cannot start pg-boss: ${err instanceof Error ? err.message : String(err)}`));
      },
    );
    return started;
  };
  const QUEUE_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
  const ensureQueue = (name: string): Promise<void> => {
    if (!QUEUE_NAME.test(name))
      return Promise.reject(
        new FlowError('invalid_options', prefixed('queue-pgboss', `queue names are 1-100 letters, digits, '_', '.' or '-', got ${JSON.stringify(name)}`)),
      );
    let p = queues.get(name);
    if (!p) {
      p = start().then(async () => {
        await boss.createQueue(name, {
          heartbeatSeconds,
          retryLimit,
          retryDelay: retryDelaySeconds,
          retryBackoff: true,
          retryDelayMax: 60,
          expireInSeconds: maxHoldSeconds,
          notify: true,
        });
      });
      p.catch(() => queues.delete(name));
      queues.set(name, p);
    }
    return p;
  };

  class PgBossWorker implements QueueWorker {
    ids: string[] = [];
    constructor(readonly queue: string) {}
    async stop(opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
      workers.delete(this);
      const ids = this.ids;
      this.ids = [];
      if (ids.length === 0) return;
      const wait = opts.wait ?? true;
      const off = Promise.all(ids.map((id) => boss.offWork(this.queue, { id, wait }))).then(() => undefined);
      if (!wait) return off;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([off, new Promise<void>((r) => (timer = setTimeout(r, opts.timeoutMs ?? 30_000)))]).finally(() => clearTimeout(timer));
    }
  }

  /** One pg-boss worker fetching one message at a time for `worker`. */
  const addSlot = async (worker: PgBossWorker, queue: string, handler: QueueHandler): Promise<void> => {
    let id: string | undefined;
    id = await boss.work<Record<string, unknown>>(
      queue,
      { batchSize: 1, localConcurrency: 1, pollingIntervalSeconds, notifyPollingIntervalSeconds: Math.max(pollingIntervalSeconds, 5) },
      async ([job]: Job<Record<string, unknown>>[]) => {
        if (!job) return;
        try {
          await handler({ id: job.id, queue, data: job.data ?? {}, attempt: job.retryCount + 1 }, job.signal);
        } finally {
          // Woken by itself: fetch again at once while there is work.
          if (id !== undefined) boss.notifyWorker(id);
        }
      },
    );
    worker.ids.push(id);
  };

  return {
    name: `pg-boss (${connection.driver})`,
    recoveryBoundSeconds: heartbeatSeconds + 2 * checkIntervalSeconds + retryDelaySeconds * 2 + pollingIntervalSeconds,
    start,
    ensure: ensureQueue,
    async send(queue: string, data: Record<string, unknown>, opts: QueueSendOptions = {}): Promise<string> {
      if (data === null || typeof data !== 'object' || Array.isArray(data))
        throw new FlowError('invalid_options', prefixed('queue-pgboss', 'a message is a JSON object'));
      // A stopped queue sends nothing, not even on a caller's connection (which would still work).
      if (stopped) throw new FlowError('queue_stopped', prefixed('queue-pgboss', 'the queue was stopped'));
      const tx = opts.transaction;
      if (tx !== undefined && (tx === null || typeof tx.executeSql !== 'function'))
        throw new FlowError('invalid_options', prefixed('queue-pgboss', 'transaction must have an executeSql(text, values) function'));
      // With a transaction, the queue exists already (ensure, called first): creating it here would
      // wait on pg-boss's own connection, which on PGlite (one connection) waits for that transaction.
      if (tx !== undefined && !queues.has(queue) && connection.driver === 'pglite') {
        throw new FlowError('invalid_options', prefixed('queue-pgboss', `call ensure(${JSON.stringify(queue)}) before sending inside a transaction on PGlite`));
      }
      await ensureQueue(queue);
      // pg-boss writes the message with the caller's connection (`db`): it commits or rolls back with
      // the caller's transaction (pg-boss runs the insert inline, no transaction of its own).
      const id = await boss.send(queue, data, {
        ...(opts.delaySeconds ? { startAfter: opts.delaySeconds } : {}),
        ...(tx ? { db: { executeSql: (text: string, values?: unknown[]) => tx.executeSql(text, values) } } : {}),
      });
      if (id === null) throw new FlowError('queue_unavailable', prefixed('queue-pgboss', `pg-boss did not store the message on ${queue}`));
      return id;
    },
    async has(queue: string, match: Record<string, string>): Promise<boolean> {
      if (match === null || typeof match !== 'object' || Object.keys(match).length === 0 || Object.values(match).some((v) => typeof v !== 'string')) {
        throw new FlowError('invalid_options', prefixed('queue-pgboss', 'match is a non-empty object of string fields'));
      }
      await ensureQueue(queue);
      // Waiting (created, retry) or held (active): completed, cancelled and failed (retries spent) are done.
      const jobs = await boss.findJobs(queue, { data: match, limit: 1000 });
      return jobs.some((j) => j.state === 'created' || j.state === 'retry' || j.state === 'active');
    },
    async work(queue: string, opts: QueueWorkOptions, handler: QueueHandler): Promise<QueueWorker> {
      const concurrency = opts.concurrency ?? 1;
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
        throw new FlowError('invalid_options', prefixed('queue-pgboss', `concurrency must be an integer from 1 to 1000, got ${String(concurrency)}`));
      await ensureQueue(queue);
      const worker = new PgBossWorker(queue);
      // One pg-boss worker per slot, each fetching one message at a time. pg-boss sleeps its poll
      // interval after every fetch unless woken by a NOTIFY, so a backlog would drain one message
      // per slot per interval; a slot that just handled a message wakes itself instead and fetches
      // again at once, back to polling (and NOTIFY) only when a fetch comes back empty.
      try {
        for (let i = 0; i < concurrency; i++) await addSlot(worker, queue, handler);
      } catch (err) {
        await worker.stop({ wait: false });
        throw err;
      }
      workers.add(worker);
      return worker;
    },
    async crash(): Promise<void> {
      if (stopped) return;
      stopped = true;
      workers.clear();
      if (started) await started.catch(() => {});
      if (started) await boss.stop({ graceful: false, close: true }).catch(() => {});
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await Promise.all([...workers].map((w) => w.stop()));
      if (started) await started.catch(() => {});
      if (started) await boss.stop({ graceful: true, timeout: 30_000, close: true }).catch(() => {});
    },
  };
}
