import { RateLimiterRes } from 'rate-limiter-flexible';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';

/**
 * Login limits a third party cannot turn against an owner (docs/hosted-api.md, "Accounts"): failures
 * count per (account, source address) and per source address, never per account alone. Once a pair
 * reaches `authAccountFailuresPer15Min` failures it waits `authDelayBaseSeconds`, doubled with each
 * further failure, at most `authDelayCapSeconds`; while it waits its attempts are 429 `rate_limited`
 * with Retry-After (not verified, not counted). The same account from another address is not held.
 * A source address past `authIpFailuresPer15Min` failures (any accounts) is 429 likewise.
 */

export function rateLimited(res: RateLimiterRes, limit: number) {
  const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return serviceError('rate_limited', `too many attempts; retry in ${retry} s`, { retry_after: retry, limit });
}

/** The limiter key of an (account, source address) pair. The email is already trimmed and lowercased. */
function pairKey(email: string, ip: string): string {
  return `${ip}|${email}`;
}

/** Throws 429 while the pair waits its delay or the address is past its failures. */
export async function checkLogin(deps: ServiceDeps, email: string, ip: string): Promise<void> {
  const { limiters, settings } = deps;
  const [delay, ipFailures] = await Promise.all([limiters.authDelay.get(pairKey(email, ip)), limiters.authIpFailures.get(ip)]);
  if (delay && delay.consumedPoints > 1 && delay.msBeforeNext > 0) throw rateLimited(delay, settings.authAccountFailuresPer15Min);
  if (ipFailures && ipFailures.consumedPoints >= settings.authIpFailuresPer15Min) throw rateLimited(ipFailures, settings.authIpFailuresPer15Min);
}

/** The delay (seconds) after the `failures`-th failure of a pair: none below the threshold. */
export function loginDelaySeconds(failures: number, settings: ServiceDeps['settings']): number {
  const over = failures - settings.authAccountFailuresPer15Min;
  if (over < 0) return 0;
  return Math.min(settings.authDelayCapSeconds, settings.authDelayBaseSeconds * 2 ** Math.min(over, 30));
}

async function counted(p: Promise<RateLimiterRes>): Promise<RateLimiterRes | undefined> {
  try {
    return await p;
  } catch (res) {
    if (res instanceof RateLimiterRes) return res;
    throw res;
  }
}

/** Count a failed login of the pair and the address; start (or lengthen) the pair's delay. */
export async function loginFailed(deps: ServiceDeps, email: string, ip: string): Promise<void> {
  const { limiters, settings } = deps;
  const key = pairKey(email, ip);
  const [pair] = await Promise.all([counted(limiters.authPair.consume(key)), counted(limiters.authIpFailures.consume(ip))]);
  const seconds = pair ? loginDelaySeconds(pair.consumedPoints, settings) : 0;
  if (seconds > 0) await limiters.authDelay.block(key, seconds);
}

/** A successful login clears its pair's count and delay (not the address's failures). */
export async function loginSucceeded(deps: ServiceDeps, email: string, ip: string): Promise<void> {
  const key = pairKey(email, ip);
  await Promise.all([deps.limiters.authPair.delete(key), deps.limiters.authDelay.delete(key)]);
}
