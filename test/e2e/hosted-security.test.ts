import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleHostedService, type HostedAssembly } from '../../adapters/hosted/index.js';
import { describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

const run = promisify(execFile);

/** The shipped assembly on a Postgres schema (the database a Postgres deployment's `npm start` runs on). */
function onPostgres(databaseUrl: string, schema: string, sessionSecret: string): Promise<HostedAssembly> {
  return assembleHostedService({ database: { databaseUrl, schema, poolSize: 2 }, settings: { sessionSecrets: [sessionSecret] }, web: false });
}

describe('session cookie attributes, from the raw Set-Cookie header', () => {
  let h: HostedFixture;
  beforeAll(async () => {
    h = await startHosted();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('over http: HttpOnly, SameSite=Lax, Path=/, 30 days, not Secure; logout clears it', async () => {
    const res = await fetch(`${h.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'cookie@example.test', password: 'correct horse battery' }),
    });
    expect(res.status).toBe(201);
    const [cookie] = res.headers.getSetCookie();
    expect(cookie).toMatch(/^svc_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=(\d+)$/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie!)![1]);
    expect(maxAge).toBeGreaterThan(30 * 86400 - 60);
    expect(maxAge).toBeLessThanOrEqual(30 * 86400);
    const value = /^svc_session=([^;]+)/.exec(cookie!)![1];
    const out = await fetch(`${h.url}/api/auth/logout`, { method: 'POST', headers: { cookie: `svc_session=${value}` } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()[0]).toMatch(/^svc_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/);
  });

  it('a cross-site cookie write is 403 forbidden whatever its Content-Type (cross-site before media type)', async () => {
    const owner = new Client(h.url);
    await owner.signup('csrf-order@example.test');
    const cookie = `svc_session=${owner.cookie}`;
    const crossSite: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }];
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      for (const extra of crossSite) {
        const res = await fetch(`${h.url}/api/automations`, {
          method: 'POST',
          headers: { cookie, ...(type ? { 'content-type': type } : {}), ...extra },
          body: 'name=csrf&site=https%3A%2F%2Fx.test',
        });
        const body = (await res.json()) as { error: string };
        expect([type, extra, res.status, body.error]).toEqual([type, extra, 403, 'forbidden']);
      }
    }
    // The same write from the service's own origin gets to the media-type rule (and nothing was created).
    const same = await fetch(`${h.url}/api/automations`, { method: 'POST', headers: { cookie, 'content-type': 'text/plain', origin: h.url }, body: 'x' });
    expect(same.status).toBe(415);
    expect((await owner.call('GET', '/api/automations')).body.automations).toEqual([]);
  });

  it('a public https URL makes it Secure even when the hop is http (TLS-terminating proxy)', async () => {
    const s = await startHosted({ publicUrl: 'https://flows.example.test' });
    try {
      const c = new Client(s.url, 'https://flows.example.test');
      const res = await c.call('POST', '/api/auth/signup', { email: 'secure@example.test', password: 'correct horse battery' });
      expect(res.status).toBe(201);
      expect(res.headers.getSetCookie()[0]).toMatch(/; Secure$/);
    } finally {
      await s.close();
    }
  });

  it('over a TLS listener (self-signed certificate made here): Secure', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-tls-'));
    const h = await startHosted({ sessionSecrets: ['t'.repeat(40)] });
    try {
      await run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ]);
      const key = await readFile(join(dir, 'key.pem'));
      const cert = await readFile(join(dir, 'cert.pem'));
      // The assembly serves plain HTTP (TLS ends at the operator's proxy): its service, the shipped one,
      // answers behind a TLS listener made here, as it does behind a proxy that forwards https.
      const server = createHttpsServer(
        { key, cert },
        getRequestListener((req, env) => h.service.fetch(req, env as never)),
      );
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const body = JSON.stringify({ email: 'tls@example.test', password: 'correct horse battery' });
      const setCookie = await new Promise<string[]>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/api/auth/signup',
            method: 'POST',
            ca: cert,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 201 ? resolve(res.headers['set-cookie'] ?? []) : reject(new Error(`status ${res.statusCode}`))));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(setCookie[0]).toMatch(/^svc_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    } finally {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Every file under `dir`, bytes concatenated with their names (for a plaintext search). */
async function grepTree(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if ((await stat(p)).size < 256 * 1024 * 1024 && (await readFile(p)).includes(needle)) hits.push(p);
    }
  };
  await walk(dir);
  return hits;
}

describe('API keys are stored as hashes only', () => {
  it('PGlite data folder: the minted key appears nowhere on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-keys-'));
    const h = await startHosted({ sessionSecrets: ['k'.repeat(40)] }, {}, { dataDir: join(dir, 'db') });
    try {
      const c = new Client(h.url);
      await c.signup('keys@example.test');
      const minted = await c.call('POST', '/api/keys', { mode: 'live' });
      expect(minted.status).toBe(201);
      const secret = minted.body.secret as string;
      await h.close(); // flush and close PGlite: everything it keeps is on disk now
      expect(await grepTree(dir, secret)).toEqual([]);
      expect(await grepTree(dir, secret.slice(9))).toEqual([]);
      // The hash is there (the search itself works).
      const { hashApiKey } = await import('../../src/service/auth/api-keys.js');
      expect((await grepTree(dir, hashApiKey(secret))).length).toBeGreaterThan(0);
    } finally {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  describePostgres('Postgres', (url) => {
    const schema = uniqueSchemaName('svc_keys');
    afterAll(async () => {
      await dropSchema(url, schema);
    });
    it('a dump of the schema holds no minted key', async () => {
      const h = await onPostgres(url, schema, 'k'.repeat(40));
      try {
        const c = new Client(h.url);
        await c.signup('keys-pg@example.test');
        const secret = (await c.call('POST', '/api/keys', { mode: 'test', automations: ['a'] })).body.secret as string;
        const { stdout } = await run('pg_dump', ['--data-only', '--schema', schema, url], { maxBuffer: 64 * 1024 * 1024 });
        expect(stdout).toContain('svc_api_keys');
        expect(stdout.includes(secret)).toBe(false);
        expect(stdout.includes(secret.slice(9, 39))).toBe(false);
      } finally {
        await h.close();
      }
    });
  });
});

/** Provision a canary secret, try to capture it (refused), then capture it properly as a secret slot and publish. */
async function canaryScenario(base: string, canary: string): Promise<void> {
  const c = new Client(base);
  await c.signup(`canary-${Math.abs(canary.length)}@example.test`);
  expect((await c.call('PUT', '/api/secrets/canary', { value: canary })).status).toBe(200);
  const a = (await c.call('POST', '/api/automations', { name: 'canary-flow', site: 'https://site.test', task: 'Sign in' })).body.automation;
  for (const form of [canary, encodeURIComponent(canary), Buffer.from(canary).toString('base64')]) {
    const r = await c.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: 'https://site.test/' },
        { kind: 'fill', target: { label: 'Key' }, value: form },
      ],
    });
    expect(r.body.error).toBe('secret_leak');
  }
  await c.call('PATCH', `/api/authoring/${a.id}`, {
    captured_ops: [
      { kind: 'navigate', url: 'https://site.test/' },
      { kind: 'fill', target: { label: 'Key' }, slot: 'canary' },
    ],
    secret_slots: ['canary'],
  });
  expect((await c.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
}

describe('a secret captured the right way is in no table and no file', () => {
  const CANARY = 'CANARYsix9f3-plain-text';

  it('PGlite data folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-canary-'));
    const h = await startHosted({ sessionSecrets: ['c'.repeat(40)] }, {}, { dataDir: join(dir, 'db') });
    try {
      await canaryScenario(h.url, CANARY);
      await h.close(); // flush and close PGlite: everything it keeps is on disk now
      for (const form of [CANARY, encodeURIComponent(CANARY), Buffer.from(CANARY).toString('base64')]) expect(await grepTree(dir, form)).toEqual([]);
    } finally {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  describePostgres('Postgres', (url) => {
    const schema = uniqueSchemaName('svc_canary');
    afterAll(async () => {
      await dropSchema(url, schema);
    });
    it('a dump of the schema', async () => {
      const h = await onPostgres(url, schema, 'c'.repeat(40));
      try {
        await canaryScenario(h.url, CANARY);
        const { stdout } = await run('pg_dump', ['--data-only', '--schema', schema, url], { maxBuffer: 64 * 1024 * 1024 });
        expect(stdout).toContain('svc_secrets');
        expect(stdout).toContain('canary-flow');
        for (const form of [CANARY, encodeURIComponent(CANARY), Buffer.from(CANARY).toString('base64')]) expect(stdout.includes(form)).toBe(false);
      } finally {
        await h.close();
      }
    });
  });
});

describe('the audit chain detects tampering', () => {
  describePostgres('Postgres', (url) => {
    const schema = uniqueSchemaName('svc_audit');
    afterAll(async () => {
      await dropSchema(url, schema);
    });
    it('changing one stored entry breaks the chain at that entry', async () => {
      const h = await onPostgres(url, schema, 'a'.repeat(40));
      try {
        const c = new Client(h.url);
        await c.signup('audit@example.test');
        for (let i = 0; i < 3; i++) await c.call('POST', '/api/keys', { mode: 'live', name: `k${i}` });
        expect((await c.call('GET', '/api/audit/verify')).body).toEqual({ ok: true, entries: 4 });
        await pgQuery(url, `update "${schema}".svc_audit set metadata = jsonb_set(metadata, '{name}', '"forged"') where seq = 2`);
        expect((await c.call('GET', '/api/audit/verify')).body).toMatchObject({ ok: false, broken: { seq: 2, reason: 'digest' } });
        // Recomputing the digest of the forged entry does not help: the next entry's prev no longer matches.
        const { auditDigest } = await import('../../src/audit/chain.js');
        const all = await h.storage.audit.all((await c.call('GET', '/api/session')).body.org.id);
        await pgQuery(url, `update "${schema}".svc_audit set digest = $1 where seq = 2`, [auditDigest(all[2]!)]);
        expect((await c.call('GET', '/api/audit/verify')).body).toMatchObject({ ok: false, broken: { seq: 3, reason: 'prev' } });
        await pgQuery(url, `delete from "${schema}".svc_audit where seq = 1`);
        expect((await c.call('GET', '/api/audit/verify')).body).toMatchObject({ ok: false, broken: { seq: 2, reason: 'seq' } });
      } finally {
        await h.close();
      }
    });
  });
});

// The fuzz of every route (no 5xx, structured errors, another org's data unchanged) is
// test/e2e/hosted-fuzz.test.ts; the secret canary across every run surface is hosted-canary.test.ts.
