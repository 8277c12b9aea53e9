import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HostedAssembly } from '../../adapters/hosted/index.js';
import { Client, PostgresAssemblies } from '../helpers/hosted.js';
import { postFrom } from '../helpers/source-address.js';
import { describePostgres, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';

/**
 * Rate limits shared across service instances on Postgres: two shipped assemblies (SVC_ROLE=api, as
 * two `npm start` processes behind a balancer), each with its own connection pool, over one schema count in one table (rate-limiter-flexible's RateLimiterPostgres),
 * so the org limit and the pre-authentication IP limit hold across both: the request after the
 * limit, on either instance, is 429 with Retry-After and RateLimit.
 */

const ORG_LIMIT = 5;
const IP_LIMIT = 8;

describePostgres('hosted rate limits shared by instances (Postgres)', (dbUrl) => {
  const schema = uniqueSchemaName('svc_rl');
  const stack = new PostgresAssemblies(dbUrl, schema);
  let instances: HostedAssembly[] = [];

  beforeAll(async () => {
    // No queue (the helper's API processes have none): these requests never start a run (the limits answer before any run).
    const settings = {
      sessionSecrets: ['r'.repeat(40)],
      orgLimitPerMinute: ORG_LIMIT,
      ipLimitPerMinute: IP_LIMIT,
      authAccountFailuresPer15Min: 3,
      authDelayBaseSeconds: 600,
    };
    instances = await stack.apis(2, settings, 3);
  }, 120_000);
  afterAll(async () => {
    await stack.close();
  });

  const run = async (i: number, key: string | undefined) => {
    const res = await fetch(`${instances[i]!.url}/v1/run/no-such-flow`, { method: 'POST', headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, body: (await res.json()) as { error: string }, headers: res.headers };
  };

  it('the org limit and the IP limit count across both instances: the next request on either is 429 with Retry-After and RateLimit', async () => {
    const owner = new Client(instances[0]!.url);
    const { org } = await owner.signup('limits@example.test');
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
    // ORG_LIMIT requests spread over both instances pass the limit (and find no such flow: 404).
    for (let n = 0; n < ORG_LIMIT; n++) expect((await run(n % 2, key)).status).toBe(404);
    for (const i of [0, 1]) {
      const limited = await run(i, key);
      expect([limited.status, limited.body.error]).toEqual([429, 'rate_limited']);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(limited.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${ORG_LIMIT}, remaining=0, reset=\\d+$`));
    }
    // Independent read: one counter row for the org in the shared table, at the count of both instances.
    const rows = await pgQuery<{ key: string; points: number }>(dbUrl, `select key, points from "${schema}".svc_rate_limits where key = $1`, [`org:${org.id}`]);
    expect(rows).toEqual([{ key: `org:${org.id}`, points: ORG_LIMIT + 2 }]);

    // The IP limit comes before the key: bad keys count too, and it holds across instances.
    const ipSoFar = ORG_LIMIT + 2;
    for (let n = ipSoFar; n < IP_LIMIT; n++) expect((await run(n % 2, 'svc_live_bad')).status).toBe(401);
    for (const i of [0, 1]) {
      const limited = await run(i, undefined);
      expect([limited.status, limited.body.error]).toEqual([429, 'rate_limited']);
      expect(limited.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${IP_LIMIT}, remaining=0, reset=\\d+$`));
    }
  });

  it('login failures count per (account, address) across both instances; the owner from another address logs in', async () => {
    const email = 'pair-limits@example.test';
    await new Client(instances[0]!.url).signup(email, 'correct horse battery');
    const login = (i: number, from: string, password: string) => postFrom(from, `${instances[i]!.url}/api/auth/login`, { email, password });
    for (let n = 0; n < 3; n++) expect((await login(n % 2, '127.0.0.2', `wrong password ${n}`)).status).toBe(401);
    for (const i of [0, 1]) {
      const held = await login(i, '127.0.0.2', 'correct horse battery');
      expect([held.status, held.body.error, Number(held.headers['retry-after']) > 0]).toEqual([429, 'rate_limited', true]);
      expect((await login(i, '127.0.0.1', 'correct horse battery')).status).toBe(200);
    }
    // Independent read: the pair's count and its delay are rows of the shared table; no row per account alone.
    const rows = await pgQuery<{ key: string; points: number }>(dbUrl, `select key, points from "${schema}".svc_rate_limits where key like $1 order by key`, [
      `%${email}`,
    ]);
    expect(rows.map((r) => r.key)).toEqual([`auth_delay:127.0.0.2|${email}`, `auth_pair:127.0.0.2|${email}`]);
    expect(rows[1]!.points).toBe(3);
  });
});
