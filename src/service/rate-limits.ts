import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitStore } from '../ports/service-storage.js';
import type { HostedSettings } from './settings.js';

/**
 * The service's rate limiters (docs/hosted-api.md, "Rate limits"), from rate-limiter-flexible. On a
 * storage with a shared store (Postgres) every limiter counts in its table, so all processes of the
 * database share one budget per IP, org and account; each also has an in-memory insurance limiter that
 * takes over while the database cannot answer. Without a shared store (PGlite: one process) they
 * count in memory.
 */
export interface ServiceLimiters {
  /** Signup and login attempts per IP per minute. */
  authIp: RateLimiterAbstract;
  /** Failed logins per (account, source address) per 15 minutes: counts only. */
  authPair: RateLimiterAbstract;
  /** The progressive delay of an (account, source address) pair: a key is blocked while it waits. */
  authDelay: RateLimiterAbstract;
  /** Failed logins per source address (any accounts) per 15 minutes. */
  authIpFailures: RateLimiterAbstract;
  /** Bearer routes: requests per IP per minute, before authentication. */
  ip: RateLimiterAbstract;
  /** Bearer routes: requests per org per minute. */
  org: RateLimiterAbstract;
}

export function createLimiters(settings: HostedSettings, store: RateLimitStore | undefined): ServiceLimiters {
  const make = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    if (!store) return memory;
    return new RateLimiterPostgres({
      storeClient: store.client,
      storeType: 'pool',
      tableName: store.tableName,
      ...(store.schemaName !== undefined ? { schemaName: store.schemaName } : {}),
      // The service migrations create the table; the limiter never runs DDL.
      tableCreated: true,
      // Expired rows are deleted by the limiter every 5 minutes (unref'd timer).
      clearExpiredByTimeout: true,
      keyPrefix,
      points,
      duration,
      insuranceLimiter: memory,
    });
  };
  return {
    authIp: make('auth_ip', settings.authIpLimitPerMinute, 60),
    // A counter: its limit is never reached; login.ts reads the count to set the delay.
    authPair: make('auth_pair', 1_000_000, 15 * 60),
    authDelay: make('auth_delay', 1, Math.max(1, settings.authDelayCapSeconds)),
    authIpFailures: make('auth_ip_fail', settings.authIpFailuresPer15Min, 15 * 60),
    ip: make('ip', settings.ipLimitPerMinute, 60),
    org: make('org', settings.orgLimitPerMinute, 60),
  };
}
