import { createHash, randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { createHostedService } from '../../src/service/hosted-service.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

/**
 * OAuth records at rest, on PGlite and Postgres: the whole authorization code flow driven over the
 * service's handler (register, authorize, consent by the API the consent page uses, token, refresh),
 * then the tables read directly: no raw code, token or client registration token anywhere, the keys
 * are SHA-256 of the ids; and a second service over the same database (a restart, another process)
 * accepts the same access token (the server keys are shared through storage).
 */

const BASE = 'http://127.0.0.1:8080';
const REDIRECT = 'http://127.0.0.1:9/cb';
// Every process of a deployment has the same SVC_SECRETS_KEY (the server's keys are sealed with it).
const settings = { publicUrl: BASE, sessionSecrets: ['s'.repeat(40)], authIpLimitPerMinute: 10_000, secretsKeys: [Buffer.alloc(32, 7)] };

class Jar {
  cookies = new Map<string, string>();
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

async function flow(fetcher: (r: Request) => Promise<Response>) {
  const jar = new Jar();
  const go = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.cookies.size > 0) headers.set('cookie', jar.header());
    const res = await fetcher(new Request(new URL(path, BASE), { ...init, headers, redirect: 'manual' }));
    jar.take(res);
    return res;
  };
  const signup = await go('/api/auth/signup', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `at-rest-${randomBytes(4).toString('hex')}@example.test`, password: 'correct horse battery' }),
  });
  const { org } = (await signup.json()) as { org: { id: string } };
  const reg = await go('/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'At Rest',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  expect([reg.status, reg.status === 201 ? '' : await reg.clone().text()]).toEqual([201, '']);
  const client = (await reg.json()) as { client_id: string; registration_access_token: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'mcp',
  });
  let res = await go(`/oauth/authorize?${q}`);
  const interaction = res.headers.get('location')!;
  const uid = interaction.split('/').pop()!;
  res = await go(`/oauth/interaction/${uid}/allow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ org: org.id, mode: 'live' }),
  });
  expect(res.status).toBe(200);
  res = await go(((await res.json()) as { redirect: string }).redirect);
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  expect(code).toBeTruthy();
  const token = (body: Record<string, string>) =>
    go('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
  const first = (await (
    await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: client.client_id })
  ).json()) as Record<string, string>;
  const second = (await (await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: client.client_id })).json()) as Record<
    string,
    string
  >;
  expect(second.access_token).toBeTruthy();
  return {
    raw: [code, first.access_token!, first.refresh_token!, second.access_token!, second.refresh_token!, client.registration_access_token, uid],
    access: second.access_token!,
  };
}

const mcpList = (fetcher: (r: Request) => Promise<Response>, token: string) =>
  fetcher(
    new Request(`${BASE}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  );

function suite(name: string, open: () => SqlStorage) {
  describe(name, () => {
    it('stores no raw code or token, keys are their SHA-256, and another process accepts the token', async () => {
      const engine = open();
      const storage = createSqlServiceStorage(engine);
      await storage.init();
      // Not the npm start assembly, on purpose: this test reads the OAuth tables through the storage
      // handle, and needs two services over that one handle (two processes of one deployment) on
      // PGlite and on Postgres; the assembly owns its connection. OAuth through the assembly
      // npm start runs is hosted-oauth-flow.test.ts and hosted-oauth-metadata.test.ts.
      const one = createHostedService({ storage, ownsStorage: false, web: false, settings });
      const { raw, access } = await flow((r) => one.fetch(r));
      const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(`${engine.schema}.svc_oauth_models`)}`.execute(engine.db)).rows;
      const dump = JSON.stringify(rows);
      for (const value of raw) expect([value.slice(0, 6), dump.includes(value)]).toEqual([value.slice(0, 6), false]);
      const keys = new Set(rows.map((r) => r.key));
      expect(keys.has(createHash('sha256').update(access).digest('hex'))).toBe(true);
      const secrets = JSON.stringify((await sql`select * from ${sql.table(`${engine.schema}.svc_oauth_secrets`)}`.execute(engine.db)).rows);
      expect(secrets).not.toMatch(/"d":|PRIVATE KEY/);
      // A second service over the same database: the same keys, the same tokens.
      const two = createHostedService({ storage, ownsStorage: false, web: false, settings });
      // (This bare service has no engine to list tools with: past authentication is what is checked.)
      expect((await mcpList((r) => two.fetch(r), access)).status).not.toBe(401);
      expect((await mcpList((r) => two.fetch(r), `${access.slice(0, -2)}xx`)).status).toBe(401);
      // A record altered in the database (or sealed under another SVC_SECRETS_KEY) is no record: 401, not 500.
      const accessKey = createHash('sha256').update(access).digest('hex');
      await sql`update ${sql.table(`${engine.schema}.svc_oauth_models`)} set payload = reverse(payload) where key = ${accessKey}`.execute(engine.db);
      const altered = await mcpList((r) => one.fetch(r), access);
      expect(altered.status).toBe(401);
      expect(altered.headers.get('www-authenticate')).toContain('error="invalid_token"');
      await one.dispose();
      await two.dispose();
      await engine.dispose();
    });
  });
}

let pglite: PGlite | undefined;
afterAll(async () => {
  await pglite?.close();
});
suite('PGlite', () => {
  pglite ??= new PGlite();
  return createSqlStorage({ pglite, schema: uniqueSchemaName('svc_oauth') });
});

describePostgres('OAuth at rest (Postgres)', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  suite('Postgres', () => {
    const schema = uniqueSchemaName('svc_oauth');
    schemas.push(schema);
    return createSqlStorage({ databaseUrl: url, schema, poolSize: 3 });
  });
});
