import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * OAuth discovery of the hosted MCP endpoint (docs/mcp.md, "Hosted"): Protected Resource Metadata
 * (RFC 9728) at both paths, Authorization Server Metadata (RFC 8414), the 401 challenge on /mcp for
 * no, bad and revoked credentials (API keys and tokens), unknown /.well-known paths as JSON 404.
 */

let h: HostedFixture;
let key: string;

beforeAll(async () => {
  h = await startHosted();
  const owner = new Client(h.url);
  await owner.signup('oauth-meta@example.test');
  const minted = await owner.call('POST', '/api/keys', { mode: 'live' });
  key = minted.body.secret;
  const revoked = await owner.call('POST', '/api/keys', { mode: 'live' });
  await owner.call('DELETE', `/api/keys/${revoked.body.key.id}`);
  keyRevoked = revoked.body.secret;
}, 120_000);
let keyRevoked: string;
afterAll(async () => {
  await h?.close();
});

const mcp = (authorization?: string) =>
  fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization !== undefined ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

describe('OAuth metadata', () => {
  it('publishes Protected Resource Metadata for /mcp at both paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(h.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc.resource).toBe(`${h.url}/mcp`);
      expect(doc.authorization_servers).toEqual([h.url]);
      expect(doc.scopes_supported).toEqual(['mcp']);
      expect(doc.bearer_methods_supported).toEqual(['header']);
    }
  });

  it('publishes Authorization Server Metadata (RFC 8414) and the OpenID document', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await fetch(h.url + path);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as Record<string, any>;
      expect(doc.issuer).toBe(h.url);
      expect(doc.authorization_endpoint).toBe(`${h.url}/oauth/authorize`);
      expect(doc.token_endpoint).toBe(`${h.url}/oauth/token`);
      expect(doc.registration_endpoint).toBe(`${h.url}/oauth/register`);
      expect(doc.code_challenge_methods_supported).toEqual(['S256']);
      expect(doc.response_types_supported).toEqual(['code']);
      expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
      expect(doc.grant_types_supported).not.toContain('implicit');
      expect(doc.client_id_metadata_document_supported).toBe(true);
    }
  });

  it('answers unknown /.well-known paths with a JSON 404', async () => {
    for (const path of ['/.well-known/unknown', '/.well-known/oauth-protected-resource/other', '/.well-known/security.txt']) {
      const res = await fetch(h.url + path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('the 401 challenge of /mcp', () => {
  const challenge = () => `Bearer resource_metadata="${h.url}/.well-known/oauth-protected-resource/mcp"`;

  it('names the resource metadata when no credential is sent, without an error', async () => {
    const res = await mcp();
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_key' });
    const header = res.headers.get('www-authenticate') ?? '';
    expect(header.startsWith(challenge())).toBe(true);
    expect(header).not.toContain('error=');
  });

  it('adds error="invalid_token" for a bad key, a revoked key and a bad token', async () => {
    for (const auth of ['Bearer svc_live_nothing', `Bearer ${keyRevoked}`, 'Bearer abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ', 'Basic Zm9vOmJhcg==']) {
      const res = await mcp(auth);
      expect(res.status, auth).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_key' });
      const header = res.headers.get('www-authenticate') ?? '';
      expect(header.startsWith(challenge())).toBe(true);
      expect(header).toContain('error="invalid_token"');
    }
  });

  it('still takes a valid API key; /v1/run stays API keys only, without the challenge', async () => {
    const res = await mcp(`Bearer ${key}`);
    expect(res.status).toBe(200);
    const run = await fetch(`${h.url}/v1/run/anything`, { method: 'POST', headers: { authorization: 'Bearer abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ' } });
    expect(run.status).toBe(401);
    expect(run.headers.get('www-authenticate')).toBeNull();
  });
});

describe('OAuth attempt limits', () => {
  it('counts registrations, token exchanges and revocations against the per-IP attempt budget (429 past it)', async () => {
    const limited = await startHosted({ authIpLimitPerMinute: 3 });
    try {
      const register = () =>
        fetch(`${limited.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'limit test', redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
        });
      for (let i = 0; i < 3; i++) expect((await register()).status).toBe(201);
      const refused = await register();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
      const token = await fetch(`${limited.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=x&client_id=y',
      });
      expect(token.status).toBe(429);
      // Discovery is never counted: a limited address can still read the metadata.
      expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  }, 120_000);
});
