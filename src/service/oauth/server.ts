/// <reference path="./oidc-provider.d.ts" />
import type Provider from 'oidc-provider';
import type { ApiKeyRecord, OrgRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { callNode, forNode } from './node-bridge.js';
import { createOAuthProvider, oauthUrls, sha256Hex } from './provider.js';

/**
 * The service's OAuth server: the provider (made on first use: its keys come from storage), its
 * requests answered through the node bridge, and the /mcp check of an access token.
 */
export interface OAuthServer {
  provider(): Promise<Provider>;
  /** Answer a request of the provider's own endpoints (authorize, token, register, revoke, jwks, discovery). */
  handle(request: Request): Promise<Response>;
  /** The node pair of a request, for the provider's interaction helpers (they read its cookies). */
  nodePair(request: Request): ReturnType<typeof forNode>;
  /**
   * The principal of an access token, in the shape of an API key (org, mode, automations), when the
   * token is live, bound to the /mcp resource, and its grant is neither revoked nor its user gone
   * from the org; undefined otherwise.
   */
  authenticate(token: string): Promise<{ record: ApiKeyRecord; org: OrgRecord } | undefined>;
}

export function createOAuthServer(deps: ServiceDeps): OAuthServer {
  let made: Promise<Provider> | undefined;
  const provider = () => {
    made ??= createOAuthProvider(deps).catch((err: unknown) => {
      made = undefined;
      throw err;
    });
    return made;
  };
  const { resource } = oauthUrls(deps.settings.publicUrl);
  return {
    provider,
    async handle(request) {
      const p = await provider();
      const answer = await callNode(request, deps.settings.publicUrl, p.callback());
      // Koa's own plain-text answers (a method or path the provider has no route for) become JSON too.
      if (answer.status < 400 || /^application\/json/i.test(answer.headers.get('content-type') ?? '')) return answer;
      const text = (await answer.text()).slice(0, 200);
      const error = answer.status === 404 ? 'not_found' : answer.status === 405 ? 'method_not_allowed' : 'invalid_request';
      return new Response(JSON.stringify({ error, error_description: text || error }), {
        status: answer.status,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
    },
    // The interaction helpers read only the cookies: the pair carries the headers, never the body
    // (the route has read it already).
    nodePair: (request) => forNode(new Request(request.url, { method: 'GET', headers: request.headers }), deps.settings.publicUrl),
    async authenticate(token) {
      // Opaque tokens of oidc-provider are 43 base64url characters; anything else is no token of ours.
      if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) return undefined;
      const p = await provider();
      const found = await p.AccessToken.find(token);
      if (!found || found.isExpired || !found.isValid || !found.grantId) return undefined;
      const audiences = Array.isArray(found.aud) ? found.aud : found.aud === undefined ? [] : [found.aud];
      if (!audiences.includes(resource)) return undefined;
      const grant = await deps.storage.oauth.grantByHash(sha256Hex(found.grantId));
      if (!grant || grant.revoked_at !== undefined) return undefined;
      const [org, member] = await Promise.all([deps.storage.orgs.get(grant.org_id), deps.storage.members.get(grant.org_id, grant.created_by)]);
      if (!org || !member) return undefined;
      const now = deps.clock.now();
      if (grant.last_used_at === undefined || !(Date.parse(now) - Date.parse(grant.last_used_at) < 60_000)) await deps.storage.oauth.touchGrant(grant.id, now);
      const record: ApiKeyRecord = {
        id: `oauth:${grant.id}`,
        org_id: grant.org_id,
        name: grant.client_name,
        mode: grant.mode,
        hash: grant.grant_hash,
        prefix: 'oauth',
        last4: '',
        ...(grant.automations ? { automations: grant.automations } : {}),
        created_at: grant.created_at,
        created_by: grant.created_by,
      };
      return { record, org };
    },
  };
}
