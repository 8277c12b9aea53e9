import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';
import { spawnProcess, type Spawned } from './rest-helpers.js';

/**
 * The example process's roles on Postgres (docs/deploy.md): a worker answers only /healthz and
 * /readyz on its PORT; a process started on a shared database without SVC_SESSION_SECRETS and
 * SVC_SECRETS_KEY outside production says so; an API or worker role without DATABASE_URL is refused
 * with a message; SIGTERM drains and exits 0.
 */
const repo = resolve(import.meta.dirname, '../..');
const main = join(repo, 'examples/hosted-service/main.mjs');

describePostgres('hosted-service roles', (url) => {
  const schema = uniqueSchemaName();
  let dir: string;
  const procs: Spawned[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-roles-'));
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await dropSchema(url, schema);
    await dropSchema(url, `${schema}_pgboss`);
    await rm(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string | undefined>) => {
    const p = spawnProcess([main], {
      cwd: repo,
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        SVC_DATA_DIR: join(dir, 'data'),
        FLOWCTL_DB_SCHEMA: schema,
        NODE_ENV: 'development',
        SVC_SESSION_SECRETS: undefined,
        SVC_SECRETS_KEY: undefined,
        ...env,
      },
    });
    procs.push(p);
    return p;
  };

  it('a worker answers /healthz and /readyz only, says the shared secrets are missing, and drains on SIGTERM', async () => {
    const worker = start({ DATABASE_URL: url, SVC_ROLE: 'worker' });
    const [, base] = (await worker.waitFor(/flowctl hosted worker on (http:\/\/\S+)/, 120_000)) as RegExpMatchArray;
    expect(worker.stderr()).toMatch(/DATABASE_URL is set but SVC_SESSION_SECRETS and SVC_SECRETS_KEY are not/);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok', role: 'worker' });
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready', role: 'worker' }]);
    const other = await fetch(`${base}/api/session`);
    expect([other.status, (await other.json()).error]).toEqual([404, 'not_found']);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  }, 180_000);

  it('with both secrets set there is no note; an api process answers the API', async () => {
    const api = start({ DATABASE_URL: url, SVC_ROLE: 'api', SVC_SESSION_SECRETS: 'r'.repeat(40), SVC_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') });
    const [, base] = (await api.waitFor(/flowctl hosted service on (http:\/\/\S+)/, 120_000)) as RegExpMatchArray;
    expect(api.stderr()).not.toMatch(/is set but SVC_/);
    expect((await fetch(`${base}/api/automations`)).status).toBe(401);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 180_000);

  it('api and worker roles need DATABASE_URL; an unknown role is refused', async () => {
    for (const [role, message] of [
      ['api', /SVC_ROLE=api needs DATABASE_URL/],
      ['worker', /SVC_ROLE=worker needs DATABASE_URL/],
      ['both', /SVC_ROLE must be all, api or worker/],
    ] as const) {
      const p = start({ DATABASE_URL: undefined, SVC_ROLE: role });
      expect((await p.exited).code).toBe(2);
      expect(p.stderr()).toMatch(message);
    }
  }, 180_000);
});
