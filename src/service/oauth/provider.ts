/// <reference path="./oidc-provider.d.ts" />
import { createHash, generateKeyPair, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { promisify } from 'node:util';
import Provider, { type Adapter, type AdapterPayload, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { OAuthStore } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { grantEndedByServer } from '../domain/oauth-grant-end.js';

/**
 * The OAuth 2.1 authorization server of the hosted MCP endpoint (docs/mcp.md, "Hosted";
 * docs/hosted-api.md, "OAuth"): oidc-provider 9, configured for what the MCP authorization spec
 * (2025-11-25) asks: authorization code with PKCE S256 only, open dynamic client registration,
 * Client ID Metadata Documents, resource indicators bound to `<public url>/mcp`, opaque access tokens
 * for an hour, rotating refresh tokens. Its records go to the service storage (`oauth` store) under
 * hashed ids, payloads sealed by the secret box; its keys (signing and cookie keys) are made once,
 * sealed and shared by every process.
 */

export const OAUTH_PREFIX = '/oauth';
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const OAUTH_SCOPES: readonly string[] = ['openid', 'offline_access', 'mcp'];
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Records with no lifetime of their own (clients): kept this long (seconds). */
const FOREVER_SECONDS = 10 * 365 * 24 * 3600;

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The org id the secret box seals the server's own records under (no org has it: ids are uuids). */
const BOX_SCOPE = 'oauth-server';

/** The public URL without a trailing slash (the issuer), and the MCP resource (`<issuer>/mcp`). */
export function oauthUrls(publicUrl: string): { issuer: string; resource: string; resourceMetadata: string } {
  const issuer = publicUrl.replace(/\/+$/, '');
  return { issuer, resource: `${issuer}/mcp`, resourceMetadata: `${issuer}/.well-known/oauth-protected-resource/mcp` };
}

/** oidc-provider's persistence over the `oauth` store: one adapter per model name. */
function storeAdapter(deps: ServiceDeps, store: () => OAuthStore) {
  return class StoreAdapter implements Adapter {
    constructor(private readonly model: string) {}

    private seal(key: string, payload: AdapterPayload): string {
      return deps.box.seal(BOX_SCOPE, `${this.model}:${key}`, JSON.stringify(payload));
    }

    private open(key: string, sealed: string, id: string | undefined, consumedAt: string | undefined): AdapterPayload | undefined {
      let payload: AdapterPayload;
      try {
        payload = JSON.parse(deps.box.open(BOX_SCOPE, `${this.model}:${key}`, sealed)) as AdapterPayload;
      } catch (err) {
        // A record this process cannot open (sealed under another SVC_SECRETS_KEY, or altered in the
        // database) is no record: the token or code is invalid (401 / invalid_grant), never a 500.
        deps.logger.warn(`[flowctl] [service] oauth: a stored ${this.model} cannot be opened (${(err as Error)?.message ?? String(err)}); treated as absent`);
        return undefined;
      }
      // The id is never stored for a model looked up by id: it comes back from the caller's own value.
      if (id !== undefined) payload.jti = id;
      if (consumedAt !== undefined) payload.consumed = Math.floor(Date.parse(consumedAt) / 1000);
      return payload;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const key = sha256Hex(id);
      // A session is looked up by its uid too, so its payload keeps its id (sealed); no other does.
      const { jti: _jti, ...rest } = payload;
      const kept = this.model === 'Session' ? payload : rest;
      const grant = this.model === 'Grant' ? id : payload.grantId;
      const now = Date.parse(deps.clock.now());
      await store().upsert({
        model: this.model,
        key,
        payload: this.seal(key, kept),
        ...(grant ? { grant: sha256Hex(grant) } : {}),
        ...(payload.uid ? { uid: sha256Hex(payload.uid) } : {}),
        ...(payload.userCode ? { user_code: sha256Hex(payload.userCode) } : {}),
        expires_at: new Date(now + (expiresIn ?? FOREVER_SECONDS) * 1000).toISOString(),
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const found = await store().find(this.model, sha256Hex(id), deps.clock.now());
      return found ? this.open(found.key, found.payload, id, found.consumed_at) : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const found = await store().findByUid(this.model, sha256Hex(uid), deps.clock.now());
      return found ? this.open(found.key, found.payload, undefined, found.consumed_at) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const found = await store().findByUserCode(this.model, sha256Hex(userCode), deps.clock.now());
      return found ? this.open(found.key, found.payload, undefined, found.consumed_at) : undefined;
    }

    async consume(id: string): Promise<void> {
      await store().consume(this.model, sha256Hex(id), deps.clock.now());
    }

    async destroy(id: string): Promise<void> {
      await store().destroy(this.model, sha256Hex(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const hash = sha256Hex(grantId);
      await store().revokeByGrant(hash);
      await grantEndedByServer(deps, hash);
    }
  };
}

interface ServerKeys {
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

/** The server's keys: made by the first process, sealed in storage, the same for every later one. */
async function serverKeys(deps: ServiceDeps): Promise<ServerKeys> {
  const rsa = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = { ...rsa.privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' };
  const fresh: ServerKeys = { jwks: { keys: [jwk] }, cookieKeys: [randomBytes(32).toString('base64url')] };
  const stored = await deps.storage.oauth.putSecretOnce('server-keys', deps.box.seal(BOX_SCOPE, 'server-keys', JSON.stringify(fresh)));
  return JSON.parse(deps.box.open(BOX_SCOPE, 'server-keys', stored)) as ServerKeys;
}

/** Whether an IP address is loopback, private, link-local, unspecified or multicast (v4, v6, v4-mapped v6). */
export function privateAddress(ip: string): boolean {
  const a = ip.toLowerCase().replace(/^::ffff:/, '');
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(a);
  if (v4) {
    const [x, y] = [Number(v4[1]), Number(v4[2])];
    return (
      x === 0 ||
      x === 10 ||
      x === 127 ||
      (x === 100 && y >= 64 && y <= 127) ||
      (x === 169 && y === 254) ||
      (x === 172 && y >= 16 && y <= 31) ||
      (x === 192 && y === 168) ||
      x >= 224
    );
  }
  return a === '::' || a === '::1' || /^(f[cd]|fe[89ab]|ff)/.test(a) || a.startsWith('::');
}

/**
 * A client ID Metadata Document is fetched only from a public https host: never a local name, an IP
 * literal, or a name that resolves to a loopback, private or link-local address (checked before the
 * fetch; a name whose DNS answer changes between the check and the fetch is not caught).
 */
export async function publicFetchHost(clientId: string): Promise<boolean> {
  let host: string;
  try {
    host = new URL(clientId).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') || /^[\d.]+$/.test(host) || !host.includes('.') || /(^|\.)(localhost|local|internal|home\.arpa)$/.test(host)) return false;
  const found = await lookup(host, { all: true }).catch(() => []);
  return found.length > 0 && !found.some((f) => privateAddress(f.address));
}

/** Build the provider (keys read or made first). */
export async function createOAuthProvider(deps: ServiceDeps): Promise<Provider> {
  const { issuer, resource } = oauthUrls(deps.settings.publicUrl);
  const keys = await serverKeys(deps);
  const provider = new Provider(issuer, {
    adapter: storeAdapter(deps, () => deps.storage.oauth),
    jwks: keys.jwks,
    cookies: { keys: keys.cookieKeys, names: { session: '_oauth_session', interaction: '_oauth_interaction', resume: '_oauth_resume' } },
    findAccount: async (_ctx: unknown, sub: string) => {
      const user = await deps.storage.users.get(sub);
      return user ? { accountId: sub, claims: async () => ({ sub }) } : undefined;
    },
    routes: {
      authorization: `${OAUTH_PREFIX}/authorize`,
      token: `${OAUTH_PREFIX}/token`,
      registration: `${OAUTH_PREFIX}/register`,
      revocation: `${OAUTH_PREFIX}/revoke`,
      jwks: `${OAUTH_PREFIX}/jwks`,
      end_session: `${OAUTH_PREFIX}/logout`,
      userinfo: `${OAUTH_PREFIX}/userinfo`,
      introspection: `${OAUTH_PREFIX}/introspect`,
      pushed_authorization_request: `${OAUTH_PREFIX}/par`,
      code_verification: `${OAUTH_PREFIX}/device`,
      device_authorization: `${OAUTH_PREFIX}/device/auth`,
      backchannel_authentication: `${OAUTH_PREFIX}/backchannel`,
      challenge: `${OAUTH_PREFIX}/challenge`,
    },
    // An error the provider cannot send back to a client's redirect URI (an unknown client, a
    // redirect URI it did not register) is shown as JSON, as every other answer of the service.
    renderError: async (ctx: { type: string; body: unknown }, out: { error: string; error_description?: string }) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = JSON.stringify({ error: out.error, error_description: out.error_description ?? out.error });
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${OAUTH_PREFIX}/interaction/${interaction.uid}` },
    scopes: [...OAUTH_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      // Not offered: the endpoints are not mounted (PAR, RP logout), and /mcp checks bearer tokens only (DPoP).
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      dPoP: { enabled: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async (_ctx: unknown, clientId: string) => publicFetchHost(clientId),
      },
      resourceIndicators: {
        enabled: true,
        // The MCP resource is the only one: a request that names none gets it, any other is invalid_target.
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          if (indicator.replace(/\/+$/, '') !== resource) throw new errors.InvalidTarget(`the only resource here is ${resource}`);
          return { scope: 'mcp', audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'opaque' };
        },
      },
    },
    // Every authorization asks for consent again (a new grant: org, mode and automations are chosen each time).
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const id = ctx.oidc.result?.consent?.grantId;
      return id ? ctx.oidc.provider.Grant.find(id) : undefined;
    },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
      Grant: REFRESH_TOKEN_TTL_SECONDS,
      Interaction: 3600,
      Session: 3600,
      IdToken: 3600,
    },
  });
  // Behind a TLS proxy the public URL says https; the bridge passes its scheme as X-Forwarded-Proto.
  provider.proxy = true;
  // A 500 of the provider is a bug of ours or of its storage: logged like the service's own (never sent).
  provider.on('server_error', (_ctx, err) => deps.logger.error(`[flowctl] [service] oauth: ${(err as Error)?.stack ?? String(err)}`));
  return provider;
}
