import { z } from '@hono/zod-openapi';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { clientIp } from '../auth/guards.js';
import { rateLimited } from '../auth/login-limits.js';
import type { ServiceDeps } from '../context.js';
import { allowConsent, consentDetails, denyConsent, grantJson, listGrants, revokeGrant } from '../domain/oauth-grants.js';
import { OAUTH_PREFIX, oauthUrls } from '../oauth/provider.js';
import { defineRoute, jsonBody, jsonResponse, type RouteDef, type ServiceRoute } from '../route-table.js';
import { AUTOMATION_NAME, IdParam } from '../schemas.js';

/**
 * OAuth 2.1 for the hosted MCP endpoint (docs/hosted-api.md, "OAuth"; docs/mcp.md, "Hosted"): the
 * discovery documents, the authorization server's own endpoints (answered by oidc-provider through
 * the node bridge), the consent page's JSON routes, and the grants beside the API keys.
 */

const UidParam = z.object({
  uid: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/)
    .openapi({ param: { name: 'uid', in: 'path' } }),
});

const ConsentBody = z
  .object({
    org: z.string().min(1).max(200),
    mode: z.enum(['live', 'test']),
    automations: z
      .array(z.string().min(1).max(64).regex(AUTOMATION_NAME))
      .max(200)
      .optional()
      .openapi({ description: 'Scope allowlist of automation names; absent: every automation of the org' }),
  })
  .openapi('ConsentBody');

const Redirect = z.object({ redirect: z.string().openapi({ description: 'Where the browser goes on: the authorization server, then the client' }) });

export const OAuthGrant = z
  .object({
    id: z.string(),
    client_name: z.string(),
    client_id: z.string(),
    redirect_host: z.string(),
    mode: z.enum(['live', 'test']),
    automations: z.array(z.string()).nullable(),
    created_at: z.string(),
    created_by: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi('OAuthGrant');

const ConsentDetails = z.object({
  client: z.object({ id: z.string(), name: z.string(), redirect_host: z.string() }),
  orgs: z.array(z.object({ id: z.string(), name: z.string(), role: z.string(), automations: z.array(z.string()) })),
});

/** The provider's endpoints: every one answered by oidc-provider itself. */
const PROVIDER_ENDPOINTS: { method: RouteDef['method']; path: string; summary: string }[] = [
  { method: 'get', path: '/.well-known/openid-configuration', summary: 'OpenID Provider metadata (the same document as RFC 8414)' },
  { method: 'get', path: `${OAUTH_PREFIX}/authorize`, summary: 'Authorization endpoint: authorization code with PKCE S256 only' },
  { method: 'post', path: `${OAUTH_PREFIX}/authorize`, summary: 'Authorization endpoint (form post)' },
  { method: 'get', path: `${OAUTH_PREFIX}/authorize/{uid}`, summary: 'Where the consent returns the browser to finish the authorization' },
  { method: 'post', path: `${OAUTH_PREFIX}/token`, summary: 'Token endpoint: authorization_code and refresh_token grants (refresh tokens rotate)' },
  { method: 'post', path: `${OAUTH_PREFIX}/register`, summary: 'Dynamic client registration (RFC 7591), open' },
  { method: 'get', path: `${OAUTH_PREFIX}/register/{uid}`, summary: 'Read a registered client (RFC 7592, with its registration access token)' },
  { method: 'post', path: `${OAUTH_PREFIX}/revoke`, summary: 'Token revocation (RFC 7009)' },
  { method: 'get', path: `${OAUTH_PREFIX}/jwks`, summary: "The authorization server's public keys" },
];

/**
 * The endpoints an anonymous caller can make the server write or work for (a client registered, a code
 * or refresh token exchanged, a token revoked): each call counts against the per-IP budget of signup
 * and login attempts (SVC_AUTH_IP_LIMIT), and past it is 429 `rate_limited` with Retry-After.
 */
const ATTEMPTS = new Set([`${OAUTH_PREFIX}/register`, `${OAUTH_PREFIX}/token`, `${OAUTH_PREFIX}/revoke`]);

export function oauthRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { issuer, resource } = oauthUrls(deps.settings.publicUrl);
  const cors = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' };
  const resourceMetadata = () => ({
    resource,
    authorization_servers: [issuer],
    scopes_supported: ['mcp'],
    bearer_methods_supported: ['header'],
    resource_name: 'flowctl hosted MCP endpoint',
    resource_documentation: `${issuer}/docs`,
  });
  const provider = PROVIDER_ENDPOINTS.map(({ method, path, summary }) =>
    defineRoute(
      {
        method,
        path,
        auth: 'public',
        summary,
        tags: ['oauth'],
        responses: { 200: { description: "oidc-provider's answer (OAuth errors as RFC 6749 bodies)" } },
      },
      async (c) => {
        if (method === 'post' && ATTEMPTS.has(path)) {
          try {
            await deps.limiters.authIp.consume(clientIp(c, deps));
          } catch (res) {
            if (res instanceof RateLimiterRes) throw rateLimited(res, deps.settings.authIpLimitPerMinute);
            throw res;
          }
        }
        return deps.oauth.handle(c.req.raw);
      },
    ),
  );
  return [
    ...['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'].map((path) =>
      defineRoute(
        {
          method: 'get',
          path,
          auth: 'public',
          summary: 'Protected Resource Metadata of /mcp (RFC 9728)',
          tags: ['oauth'],
          responses: { 200: jsonResponse('The metadata document', z.record(z.string(), z.unknown())) },
        },
        (c) => c.json(resourceMetadata(), 200, cors),
      ),
    ),
    defineRoute(
      {
        method: 'get',
        path: '/.well-known/oauth-authorization-server',
        auth: 'public',
        summary: 'Authorization Server Metadata (RFC 8414)',
        tags: ['oauth'],
        responses: { 200: jsonResponse('The metadata document', z.record(z.string(), z.unknown())) },
      },
      async (c) => {
        const url = new URL('/.well-known/openid-configuration', c.req.url);
        const answer = await deps.oauth.handle(new Request(url, { headers: { accept: 'application/json' } }));
        // The provider's own error (a 500 it logged) goes out as it is; typed as the route's 200 body.
        if (answer.status !== 200) return answer as never;
        return c.json((await answer.json()) as Record<string, unknown>, 200, cors);
      },
    ),
    ...provider,
    defineRoute(
      {
        method: 'get',
        path: `${OAUTH_PREFIX}/interaction/{uid}`,
        auth: 'public',
        summary: "The authorization server's interaction: on to the consent page of the web app",
        tags: ['oauth'],
        request: { params: UidParam },
        responses: { 303: { description: 'To /consent/{uid}' } },
      },
      (c) => c.body(null, 303, { location: `/consent/${c.req.valid('param').uid}`, 'cache-control': 'no-store' }),
    ),
    defineRoute(
      {
        method: 'get',
        path: `${OAUTH_PREFIX}/interaction/{uid}/details`,
        auth: 'session',
        summary: 'What the consent page shows: the client, the orgs of the user and their automations',
        tags: ['oauth'],
        request: { params: UidParam },
        responses: {
          200: jsonResponse('The consent details', ConsentDetails),
          404: { description: '`not_found`: no such authorization request in this browser' },
        },
      },
      async (c) => c.json(await consentDetails(deps, c.req.raw, c.req.valid('param').uid, c.get('auth').user.id), 200, { 'cache-control': 'no-store' }),
    ),
    defineRoute(
      {
        method: 'post',
        path: `${OAUTH_PREFIX}/interaction/{uid}/allow`,
        auth: 'session',
        summary: '"Allow access": a grant for the chosen org, mode and automations',
        tags: ['oauth'],
        request: { params: UidParam, ...jsonBody(ConsentBody) },
        responses: { 200: jsonResponse('Where the browser goes on', Redirect) },
      },
      async (c) => {
        const redirect = await allowConsent(deps, c.req.raw, c.req.valid('param').uid, c.get('auth').user.id, c.req.valid('json'));
        return c.json({ redirect }, 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: `${OAUTH_PREFIX}/interaction/{uid}/deny`,
        auth: 'session',
        summary: '"Deny": the client gets access_denied',
        tags: ['oauth'],
        request: { params: UidParam },
        responses: { 200: jsonResponse('Where the browser goes on', Redirect) },
      },
      async (c) => c.json({ redirect: await denyConsent(deps, c.req.raw, c.req.valid('param').uid) }, 200),
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/oauth/grants',
        auth: 'session',
        summary: "The org's OAuth grants, newest first (an owner sees all; a member the ones they gave)",
        tags: ['oauth'],
        responses: { 200: jsonResponse('Grants', z.object({ grants: z.array(OAuthGrant) })) },
      },
      async (c) => {
        const { org, user, role } = c.get('auth');
        return c.json({ grants: (await listGrants(deps, org.id, user.id, role === 'owner')).map(grantJson) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/oauth/grants/{id}',
        auth: 'session',
        summary: 'Revoke a grant (an owner, or the member who gave it): its tokens stop working on the next request',
        tags: ['oauth'],
        request: { params: IdParam },
        responses: { 204: { description: 'Revoked (also when it already was)' }, 404: { description: '`not_found`' } },
      },
      async (c) => {
        const { org, user, role } = c.get('auth');
        await revokeGrant(deps, org.id, user.id, role === 'owner', c.req.valid('param').id);
        return c.body(null, 204);
      },
    ),
  ];
}
