import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { connectWithOAuth, consentInBrowser, MemoryAuthProvider, REDIRECT, startAuthorization } from '../helpers/oauth.js';

/**
 * OAuth 2.1 for the hosted MCP endpoint with the official SDK client's own flow (discovery,
 * registration, PKCE) and the consent given in Chromium by a signed-in user: the grant's scope
 * (org, mode, automations) filters the tools like an API key's; refresh rotates; revocation in the
 * web app's API is at once; Deny is access_denied; tokens are hashed at rest.
 */

let h: HostedFixture;
let browser: Browser;
let owner: Client;
let orgId: string;

async function publish(name: string, ops: unknown[], slots: { secret_slots?: string[] } = {}) {
  const a = (await owner.call('POST', '/api/automations', { name, site: `${h.url}/example/site`, task: `Task of ${name}` })).body.automation;
  await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, ...slots });
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
}

beforeAll(async () => {
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  orgId = (await owner.signup('oauth-flow@example.test', 'correct horse battery', 'OAuth Org')).org.id;
  const page = h.exampleSiteUrl;
  await publish('read-title', [
    { kind: 'navigate', url: page },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  await publish('other-tool', [
    { kind: 'navigate', url: page },
    { kind: 'extract', target: 'h1', name: 'title' },
  ]);
  await publish(
    'uses-secret',
    [
      { kind: 'navigate', url: page },
      { kind: 'fill', target: { label: 'City' }, slot: 'home' },
      { kind: 'extract', target: 'h1', name: 'title' },
    ],
    { secret_slots: ['home'] },
  );
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const INSPECTOR = join(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json'), '../clients/launcher/build/index.js');

/** The MCP Inspector CLI (async: the service answers from this process meanwhile). */
function inspector(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [INSPECTOR, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', MCP_CATALOG_PATH: join(cwd, 'catalog.json') } });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 180_000); // caps a hang only
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const mcpCall = (token: string, body: unknown) =>
  fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });

const tokenRequest = (params: Record<string, string>) =>
  fetch(`${h.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });

describe('the SDK client through OAuth', () => {
  const provider = new MemoryAuthProvider('Flow Chat Client');

  it('registers, gets consent in the browser, lists only the chosen automations and runs one', async () => {
    const client = await connectWithOAuth(browser, h.url, owner.cookie!, provider, { org: orgId, mode: 'live', automations: ['read-title'] });
    expect(provider.info?.client_id).toBeTruthy();
    expect(provider.saved?.access_token).toBeTruthy();
    expect(provider.saved?.refresh_token).toBeTruthy();
    expect(provider.saved?.expires_in).toBeLessThanOrEqual(3600);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['read-title']);
    const result = await client.callTool({ name: 'read-title', arguments: {} });
    expect(result.isError, JSON.stringify(result)).not.toBe(true);
    await client.close();
    const grants = await owner.call('GET', '/api/oauth/grants');
    expect(grants.body.grants).toHaveLength(1);
    expect(grants.body.grants[0]).toMatchObject({ client_name: 'Flow Chat Client', mode: 'live', automations: ['read-title'], redirect_host: '127.0.0.1:9' });
    const audit = await owner.call('GET', '/api/audit');
    expect(JSON.stringify(audit.body)).toContain('oauth.grant');
  });

  it('stores codes and tokens hashed: no raw token appears in the table', async () => {
    const { access_token, refresh_token } = provider.saved!;
    const rows = (await h.pglite.query<Record<string, string>>('select * from svc_oauth_models')).rows;
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(access_token);
    expect(dump).not.toContain(refresh_token!);
    const sha = (v: string) => createHash('sha256').update(v).digest('hex');
    expect(rows.some((r) => r.model === 'AccessToken' && r.key === sha(access_token))).toBe(true);
    expect(rows.some((r) => r.model === 'RefreshToken' && r.key === sha(refresh_token!))).toBe(true);
  });

  it('the MCP Inspector CLI lists the tools with the access token as a bearer header', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oauth-inspector-'));
    try {
      const r = await inspector(
        ['--cli', `${h.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${provider.saved!.access_token}`, '--method', 'tools/list'],
        dir,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).tools.map((t: { name: string }) => t.name)).toEqual(['read-title']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 200_000);

  it('refreshes: the client gets new tokens, and a used refresh token is refused', async () => {
    const old = { ...provider.saved! };
    // An access token the server no longer knows: the SDK refreshes on the 401 and retries.
    provider.saved = { ...old, access_token: 'expired-or-unknown-token-value-000000000000' };
    const client = new (await import('@modelcontextprotocol/sdk/client/index.js')).Client({ name: 'again', version: '1.0.0' });
    await client.connect((await import('../helpers/oauth.js')).mcpTransport(h.url, provider));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['read-title']);
    await client.close();
    expect(provider.saved?.refresh_token).toBeTruthy();
    expect(provider.saved?.refresh_token).not.toBe(old.refresh_token);
    expect(provider.saved?.access_token).not.toBe(old.access_token);
    // The old refresh token is used up: presenting it again is refused (and, as OAuth 2.1 advises for
    // a replayed refresh token, revokes the grant).
    const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: old.refresh_token!, client_id: provider.info!.client_id });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    // The grant's tokens are gone, and the web app says so: the grant is listed revoked, audited as the service's.
    const grants = (await owner.call('GET', '/api/oauth/grants')).body.grants as { client_id: string; revoked_at: string | null }[];
    expect(grants.find((g) => g.client_id === provider.info!.client_id)?.revoked_at).toBeTruthy();
    const after = await mcpCall(provider.saved!.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(after.status).toBe(401);
    expect(JSON.stringify((await owner.call('GET', '/api/audit')).body)).toContain('the authorization server revoked the grant');
  });

  it('a grant revoked in the web app stops its access token and its refresh token at once', async () => {
    const second = new MemoryAuthProvider('Revoked Client');
    const client = await connectWithOAuth(browser, h.url, owner.cookie!, second, { org: orgId });
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['other-tool', 'read-title', 'uses-secret']);
    await client.close();
    const grant = (await owner.call('GET', '/api/oauth/grants')).body.grants.find((g: { client_name: string }) => g.client_name === 'Revoked Client');
    expect((await owner.call('DELETE', `/api/oauth/grants/${grant.id}`)).status).toBe(204);
    const after = await mcpCall(second.saved!.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.saved!.refresh_token!, client_id: second.info!.client_id });
    expect(refresh.status).toBe(400);
    const listed = (await owner.call('GET', '/api/oauth/grants')).body.grants.find((g: { id: string }) => g.id === grant.id);
    expect(listed.revoked_at).toBeTruthy();
    expect(JSON.stringify((await owner.call('GET', '/api/audit')).body)).toContain('oauth.revoke');
  });

  it('a test-mode grant gets test_key_forbidden on a secret-input automation', async () => {
    const tester = new MemoryAuthProvider('Test Mode Client');
    const client = await connectWithOAuth(browser, h.url, owner.cookie!, tester, { org: orgId, mode: 'test' });
    await client.close();
    const res = await mcpCall(tester.saved!.access_token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'uses-secret', arguments: {} } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ id: 7, error: { data: { error: 'test_key_forbidden' } } });
  });
});

describe('refusals', () => {
  it('Deny sends the client access_denied', async () => {
    const denied = new MemoryAuthProvider('Denied Client');
    const { url } = await startAuthorization(h.url, denied);
    const back = await consentInBrowser(browser, h.url, owner.cookie!, url, { deny: true });
    expect(back.toString().startsWith(REDIRECT)).toBe(true);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('an authorization for another resource is refused (invalid_target)', async () => {
    const other = new MemoryAuthProvider('Other Resource Client');
    const { url } = await startAuthorization(h.url, other);
    url.searchParams.set('resource', 'https://elsewhere.example/mcp');
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location') ?? '';
    expect(res.status).toBe(303);
    expect(new URL(location).searchParams.get('error')).toBe('invalid_target');
  });

  it('an authorization without PKCE is refused', async () => {
    const other = new MemoryAuthProvider('No PKCE Client');
    const { url } = await startAuthorization(h.url, other);
    url.searchParams.delete('code_challenge');
    url.searchParams.delete('code_challenge_method');
    const res = await fetch(url, { redirect: 'manual' });
    expect(new URL(res.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
  });
});
