import { randomBytes } from 'node:crypto';
import { FlowError, prefixed } from '../errors.js';
import { MIN_SESSION_SECRET_LENGTH } from './auth/session-cookie.js';
import { checkEgressPolicy } from '../tools/egress.js';
import { parseSecretsKeys } from './secret-box.js';

/**
 * Settings of the hosted service (docs/hosted-api.md, "Configuration"). `settingsFromEnv` reads the
 * documented environment variables; `resolveSettings` fills defaults and enforces the production
 * rules. Neither touches the file system: generating secrets into SVC_DATA_DIR is the example's job.
 */
export interface HostedSettings {
  /** `NODE_ENV=production`: no auto-provisioning, secrets must be given. */
  production: boolean;
  /** The base URL users reach (SVC_PUBLIC_URL). https makes cookies Secure. */
  publicUrl: string;
  /** Origins allowed for cookie-authenticated writes and WebSockets (SVC_ORIGINS). */
  origins: string[];
  /** Newest first; the first signs, all verify (SVC_SESSION_SECRETS). */
  sessionSecrets: string[];
  /** Requests per minute per IP before authentication on the bearer routes (SVC_IP_LIMIT). */
  ipLimitPerMinute: number;
  /** Requests per minute per org on the bearer routes (SVC_ORG_LIMIT). */
  orgLimitPerMinute: number;
  /** Signup and login attempts per minute per IP (SVC_AUTH_IP_LIMIT). */
  authIpLimitPerMinute: number;
  /**
   * Failed logins for one account from one source address (per 15 minutes) before that pair waits a
   * progressive delay (SVC_AUTH_ACCOUNT_LIMIT). Never locks the account from other addresses.
   */
  authAccountFailuresPer15Min: number;
  /** Failed logins from one source address, any accounts, per 15 minutes (SVC_AUTH_IP_FAILURES). */
  authIpFailuresPer15Min: number;
  /** The first delay (seconds) once an (account, address) pair reaches its failures; doubles with each further failure (SVC_AUTH_DELAY_BASE). */
  authDelayBaseSeconds: number;
  /** The longest delay (seconds) of an (account, address) pair (SVC_AUTH_DELAY_CAP). */
  authDelayCapSeconds: number;
  /** Request body limit. */
  maxBodyBytes: number;
  /** A request body that sends no byte for this many ms is closed (408 through node-http) (SVC_BODY_IDLE_TIMEOUT_MS). */
  bodyIdleTimeoutMs: number;
  /** Trust `X-Forwarded-For` for the client IP (SVC_TRUST_PROXY=1): only behind a proxy you run. */
  trustProxy: boolean;
  /** Keys of the org secret store (SVC_SECRETS_KEY): 32 bytes each, newest first. */
  secretsKeys: Buffer[];
  /** Schedules whose consecutive fires can come closer than this many seconds are refused (SVC_MIN_CRON_INTERVAL). */
  minCronIntervalSeconds: number;
  /** Run the scheduler loop in this process (SVC_SCHEDULER=0 turns it off). Default true. */
  scheduler: boolean;
  /** `sync` runs gateway, MCP and schedule runs in the process that takes them; `queue` sends them to workers (SVC_RUN_DISPATCH). */
  runDispatch: 'sync' | 'queue';
  /** Runs one worker process executes at once (SVC_WORKER_CONCURRENCY). Default 4. */
  workerConcurrency: number;
  /**
   * Seconds a queued run may wait for a worker to start it (SVC_QUEUE_TIMEOUT). Past that, recovery
   * ends it `failed` with `start_timeout`: a run whose message was lost (the API process died, or the
   * database went away, between storing the run and its message) never stays `queued`. Default 3600.
   */
  queueTimeoutSeconds: number;
  /**
   * Seconds after which the orphan sweep of worker processes fails a queued run that has no queue
   * message (SVC_QUEUE_ORPHAN): `failed` with `queue_message_lost`, within this plus
   * SVC_RECONCILE_INTERVAL. A run whose message is there, however long it waits, is never touched.
   * Default 60.
   */
  queueOrphanSeconds: number;
  /**
   * Seconds between passes of the reconcile sweep of worker processes (SVC_RECONCILE_INTERVAL): an
   * execution still `queued` or `running` whose engine run has ended (recovered after a crash or a
   * database outage) gets its outcome. Default 30 (the engine's lease).
   */
  reconcileIntervalSeconds: number;
  /** Seconds between the comment heartbeats of a quiet run stream and the pings of the live sockets (SVC_STREAM_HEARTBEAT). Default 15. */
  streamHeartbeatSeconds: number;
  /** Egress allowlist entries (SVC_EGRESS_ALLOW): private destinations webhook deliveries may reach. Default none. */
  egressAllow: string[];
  /** Seconds before each webhook retry (SVC_WEBHOOK_RETRY_SCHEDULE, comma-separated). Default 5,30,120,600,1800,7200. */
  webhookRetrySeconds: number[];
}

export const DEFAULT_IP_LIMIT = 600;
export const DEFAULT_ORG_LIMIT = 1200;
export const DEFAULT_AUTH_IP_LIMIT = 100;
export const DEFAULT_AUTH_ACCOUNT_LIMIT = 5;
export const DEFAULT_AUTH_IP_FAILURES = 50;
/** A request body idle this long is closed: a slow client gets a third of the 30 s connection idle rule. */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 10_000;
export const DEFAULT_AUTH_DELAY_BASE = 1;
export const DEFAULT_AUTH_DELAY_CAP = 900;
export const DEFAULT_MIN_CRON_INTERVAL = 60;
export const DEFAULT_WORKER_CONCURRENCY = 4;
export const DEFAULT_QUEUE_TIMEOUT = 3600;
export const DEFAULT_RECONCILE_INTERVAL = 30;
/** Seconds before each webhook retry after a failed attempt: 6 retries over about 2.7 hours. */
export const DEFAULT_WEBHOOK_RETRY_SECONDS: readonly number[] = [5, 30, 120, 600, 1800, 7200];
export const DEFAULT_QUEUE_ORPHAN = 60;

const int = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new FlowError('invalid_settings', prefixed('service', `${name} must be a positive integer, got ${JSON.stringify(value)}`));
  }
  return Number(value);
};

/** The settings named by environment variables (undefined where unset). */
export function settingsFromEnv(env: Record<string, string | undefined>): Partial<HostedSettings> {
  const host = env.HOST || '127.0.0.1';
  const port = env.PORT || '8080';
  const out: Partial<HostedSettings> = {
    production: env.NODE_ENV === 'production',
    publicUrl: env.SVC_PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
  };
  if (env.SVC_ORIGINS)
    out.origins = env.SVC_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (env.SVC_SESSION_SECRETS)
    out.sessionSecrets = env.SVC_SESSION_SECRETS.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const limits: [keyof HostedSettings, string][] = [
    ['ipLimitPerMinute', 'SVC_IP_LIMIT'],
    ['orgLimitPerMinute', 'SVC_ORG_LIMIT'],
    ['authIpLimitPerMinute', 'SVC_AUTH_IP_LIMIT'],
    ['authAccountFailuresPer15Min', 'SVC_AUTH_ACCOUNT_LIMIT'],
    ['authIpFailuresPer15Min', 'SVC_AUTH_IP_FAILURES'],
    ['authDelayBaseSeconds', 'SVC_AUTH_DELAY_BASE'],
    ['authDelayCapSeconds', 'SVC_AUTH_DELAY_CAP'],
    ['minCronIntervalSeconds', 'SVC_MIN_CRON_INTERVAL'],
    ['workerConcurrency', 'SVC_WORKER_CONCURRENCY'],
    ['queueTimeoutSeconds', 'SVC_QUEUE_TIMEOUT'],
    ['queueOrphanSeconds', 'SVC_QUEUE_ORPHAN'],
    ['reconcileIntervalSeconds', 'SVC_RECONCILE_INTERVAL'],
    ['streamHeartbeatSeconds', 'SVC_STREAM_HEARTBEAT'],
    ['bodyIdleTimeoutMs', 'SVC_BODY_IDLE_TIMEOUT_MS'],
  ];
  for (const [key, name] of limits) {
    const v = int(name, env[name]);
    if (v !== undefined) (out as Record<string, unknown>)[key] = v;
  }
  if (env.SVC_SECRETS_KEY) out.secretsKeys = parseSecretsKeys(env.SVC_SECRETS_KEY);
  if (env.SVC_TRUST_PROXY) out.trustProxy = env.SVC_TRUST_PROXY === '1' || env.SVC_TRUST_PROXY === 'true';
  if (env.SVC_EGRESS_ALLOW)
    out.egressAllow = env.SVC_EGRESS_ALLOW.split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const retrySchedule = env.SVC_WEBHOOK_RETRY_SCHEDULE;
  if (retrySchedule !== undefined && retrySchedule !== '') {
    out.webhookRetrySeconds = retrySchedule.split(',').map((x) => {
      const v = x.trim();
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 86_400)
        throw new FlowError(
          'invalid_settings',
          prefixed('service', `SVC_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds from 1 to 86400, got ${JSON.stringify(retrySchedule.slice(0, 80))}`),
        );
      return Number(v);
    });
  }
  if (env.SVC_RUN_DISPATCH) {
    if (env.SVC_RUN_DISPATCH !== 'sync' && env.SVC_RUN_DISPATCH !== 'queue') {
      throw new FlowError(
        'invalid_settings',
        prefixed('service', `SVC_RUN_DISPATCH must be sync or queue, got ${JSON.stringify(env.SVC_RUN_DISPATCH.slice(0, 40))}`),
      );
    }
    out.runDispatch = env.SVC_RUN_DISPATCH;
  }
  if (env.SVC_SCHEDULER) out.scheduler = !(env.SVC_SCHEDULER === '0' || env.SVC_SCHEDULER === 'false');
  return out;
}

/** Fill defaults; refuse what production must not run with. */
export function resolveSettings(given: Partial<HostedSettings> = {}): HostedSettings {
  const production = given.production ?? false;
  const publicUrl = given.publicUrl ?? 'http://127.0.0.1:8080';
  let origin: string;
  try {
    origin = new URL(publicUrl).origin;
  } catch {
    throw new FlowError('invalid_settings', prefixed('service', `SVC_PUBLIC_URL is not a URL: ${JSON.stringify(publicUrl)}`));
  }
  let sessionSecrets = given.sessionSecrets ?? [];
  if (sessionSecrets.length === 0) {
    if (production) {
      throw new FlowError(
        'invalid_settings',
        prefixed('service', 'SVC_SESSION_SECRETS must be set in production (comma-separated, newest first, each at least 32 characters)'),
      );
    }
    sessionSecrets = [randomBytes(32).toString('base64url')];
  }
  const short = sessionSecrets.findIndex((s) => s.length < MIN_SESSION_SECRET_LENGTH);
  if (short >= 0) {
    throw new FlowError(
      'invalid_settings',
      prefixed('service', `SVC_SESSION_SECRETS: secret ${short + 1} is shorter than ${MIN_SESSION_SECRET_LENGTH} characters`),
    );
  }
  let secretsKeys = given.secretsKeys ?? [];
  if (secretsKeys.length === 0) {
    if (production)
      throw new FlowError(
        'invalid_settings',
        prefixed('service', 'SVC_SECRETS_KEY must be set in production (32 bytes in base64; a comma-separated list rotates, newest first)'),
      );
    secretsKeys = [randomBytes(32)];
  }
  const runDispatch = given.runDispatch ?? 'sync';
  if (runDispatch !== 'sync' && runDispatch !== 'queue')
    throw new FlowError('invalid_settings', prefixed('service', `runDispatch must be sync or queue, got ${JSON.stringify(String(runDispatch).slice(0, 40))}`));
  const workerConcurrency = given.workerConcurrency ?? DEFAULT_WORKER_CONCURRENCY;
  if (!Number.isInteger(workerConcurrency) || workerConcurrency < 1 || workerConcurrency > 256) {
    throw new FlowError('invalid_settings', prefixed('service', `SVC_WORKER_CONCURRENCY must be an integer from 1 to 256, got ${String(workerConcurrency)}`));
  }
  const queueTimeoutSeconds = given.queueTimeoutSeconds ?? DEFAULT_QUEUE_TIMEOUT;
  if (!Number.isFinite(queueTimeoutSeconds) || queueTimeoutSeconds < 1 || queueTimeoutSeconds > 30 * 86_400) {
    throw new FlowError(
      'invalid_settings',
      prefixed('service', `SVC_QUEUE_TIMEOUT must be seconds from 1 to 2592000 (30 days), got ${String(queueTimeoutSeconds)}`),
    );
  }
  const queueOrphanSeconds = given.queueOrphanSeconds ?? DEFAULT_QUEUE_ORPHAN;
  if (!Number.isFinite(queueOrphanSeconds) || queueOrphanSeconds < 1 || queueOrphanSeconds > 86_400) {
    throw new FlowError('invalid_settings', prefixed('service', `SVC_QUEUE_ORPHAN must be seconds from 1 to 86400, got ${String(queueOrphanSeconds)}`));
  }
  const reconcileIntervalSeconds = given.reconcileIntervalSeconds ?? DEFAULT_RECONCILE_INTERVAL;
  if (!Number.isFinite(reconcileIntervalSeconds) || reconcileIntervalSeconds < 1 || reconcileIntervalSeconds > 86_400) {
    throw new FlowError(
      'invalid_settings',
      prefixed('service', `SVC_RECONCILE_INTERVAL must be seconds from 1 to 86400, got ${String(reconcileIntervalSeconds)}`),
    );
  }
  const streamHeartbeatSeconds = given.streamHeartbeatSeconds ?? 15;
  if (typeof streamHeartbeatSeconds !== 'number' || !(streamHeartbeatSeconds > 0) || streamHeartbeatSeconds > 3600) {
    throw new FlowError(
      'invalid_settings',
      prefixed('service', `SVC_STREAM_HEARTBEAT must be a number of seconds from 1 to 3600, got ${String(streamHeartbeatSeconds)}`),
    );
  }
  const egressAllow = given.egressAllow ?? [];
  try {
    checkEgressPolicy({ allow: egressAllow });
  } catch (err) {
    throw new FlowError('invalid_settings', prefixed('service', `SVC_EGRESS_ALLOW: ${(err as Error).message.replace(/^(\[[^\]]+\]\s*)+/, '')}`));
  }
  const webhookRetrySeconds = given.webhookRetrySeconds ?? [...DEFAULT_WEBHOOK_RETRY_SECONDS];
  if (
    !Array.isArray(webhookRetrySeconds) ||
    webhookRetrySeconds.length > 20 ||
    !webhookRetrySeconds.every((v) => Number.isFinite(v) && v >= 0.5 && v <= 86_400)
  ) {
    throw new FlowError('invalid_settings', prefixed('service', 'webhookRetrySeconds must be at most 20 delays of 0.5 to 86400 seconds'));
  }
  return {
    production,
    publicUrl,
    secretsKeys,
    origins: given.origins?.length ? given.origins.map((o) => o.replace(/\/+$/, '')) : [origin],
    sessionSecrets,
    ipLimitPerMinute: given.ipLimitPerMinute ?? DEFAULT_IP_LIMIT,
    orgLimitPerMinute: given.orgLimitPerMinute ?? DEFAULT_ORG_LIMIT,
    authIpLimitPerMinute: given.authIpLimitPerMinute ?? DEFAULT_AUTH_IP_LIMIT,
    authAccountFailuresPer15Min: given.authAccountFailuresPer15Min ?? DEFAULT_AUTH_ACCOUNT_LIMIT,
    authIpFailuresPer15Min: given.authIpFailuresPer15Min ?? DEFAULT_AUTH_IP_FAILURES,
    authDelayBaseSeconds: given.authDelayBaseSeconds ?? DEFAULT_AUTH_DELAY_BASE,
    authDelayCapSeconds: given.authDelayCapSeconds ?? DEFAULT_AUTH_DELAY_CAP,
    maxBodyBytes: given.maxBodyBytes ?? 1024 * 1024,
    bodyIdleTimeoutMs: given.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
    trustProxy: given.trustProxy ?? false,
    minCronIntervalSeconds: given.minCronIntervalSeconds ?? DEFAULT_MIN_CRON_INTERVAL,
    scheduler: given.scheduler ?? true,
    runDispatch,
    workerConcurrency,
    queueTimeoutSeconds,
    queueOrphanSeconds,
    reconcileIntervalSeconds,
    streamHeartbeatSeconds,
    egressAllow: [...egressAllow],
    webhookRetrySeconds: [...webhookRetrySeconds],
  };
}
