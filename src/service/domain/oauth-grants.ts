/// <reference path="../oauth/oidc-provider.d.ts" />
import type { InteractionDetails } from 'oidc-provider';
import type { OAuthGrantRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { OAUTH_SCOPES, oauthUrls, sha256Hex } from '../oauth/provider.js';
import { audit } from './audit.js';

/**
 * OAuth grants (docs/hosted-api.md, "OAuth"): the consent a signed-in user gives a client (org, live
 * or test, automations: the API key's scope model), its refusal, and the grants listed and revoked
 * beside the API keys. Creation and revocation are audited.
 */

export interface ConsentChoice {
  org: string;
  mode: 'live' | 'test';
  automations?: string[];
}

/** The interaction of `uid` bound to this browser (the provider's interaction cookie), or not_found. */
async function interaction(deps: ServiceDeps, request: Request, uid: string): Promise<InteractionDetails> {
  const p = await deps.oauth.provider();
  const { req, res } = deps.oauth.nodePair(request);
  const details = await p.interactionDetails(req, res).catch(() => undefined);
  if (!details || details.uid !== uid)
    throw serviceError('not_found', 'no such authorization request in this browser (it expired, or was started elsewhere): start again from the client');
  return details;
}

async function clientOf(deps: ServiceDeps, details: InteractionDetails) {
  const p = await deps.oauth.provider();
  const clientId = String(details.params.client_id ?? '');
  const client = await p.Client.find(clientId);
  if (!client) throw serviceError('not_found', 'the client of this authorization request is no longer registered');
  const redirect = String(details.params.redirect_uri ?? client.redirectUris?.[0] ?? '');
  let host = '';
  try {
    host = new URL(redirect).host;
  } catch {
    host = redirect.slice(0, 200);
  }
  return { id: clientId, name: (client.clientName || clientId).slice(0, 200), redirect_host: host };
}

/** What the consent page shows: the client, and the user's orgs with their automations to choose from. */
export async function consentDetails(deps: ServiceDeps, request: Request, uid: string, userId: string) {
  const details = await interaction(deps, request, uid);
  const client = await clientOf(deps, details);
  const orgs = await deps.storage.members.orgsOf(userId);
  const withAutomations = await Promise.all(
    orgs.map(async ({ org, role }) => ({
      id: org.id,
      name: org.name,
      role,
      automations: (await deps.storage.automations.list(org.id)).map((a) => a.name),
    })),
  );
  return { client, orgs: withAutomations };
}

/** Allow: a grant for the MCP resource, stored with the user's choice; the URL the browser goes on to. */
export async function allowConsent(deps: ServiceDeps, request: Request, uid: string, userId: string, choice: ConsentChoice): Promise<string> {
  const details = await interaction(deps, request, uid);
  if (details.session?.accountId !== undefined && details.session.accountId !== userId)
    throw serviceError('forbidden', 'this authorization request was started by another signed-in user');
  if (!(await deps.storage.members.get(choice.org, userId))) throw serviceError('not_found', 'no such org among yours');
  const client = await clientOf(deps, details);
  const p = await deps.oauth.provider();
  const { resource } = oauthUrls(deps.settings.publicUrl);
  const grant = new p.Grant({ accountId: userId, clientId: client.id });
  // The scopes the client asked for that the server knows (the consent covers them all at once: the
  // first prompt is the login, whose details list no missing scope yet), and the MCP resource's.
  const asked = String(details.params.scope ?? '')
    .split(' ')
    .filter((s) => OAUTH_SCOPES.includes(s));
  if (asked.length > 0) grant.addOIDCScope(asked.join(' '));
  const prompt = details.prompt.details as { missingOIDCClaims?: string[] };
  if (prompt.missingOIDCClaims?.length) grant.addOIDCClaims(prompt.missingOIDCClaims);
  grant.addResourceScope(resource, 'mcp');
  const grantId = await grant.save();
  const record: OAuthGrantRecord = {
    id: deps.ids.uuid(),
    org_id: choice.org,
    grant_hash: sha256Hex(grantId),
    client_id: client.id.slice(0, 2000),
    client_name: client.name,
    redirect_host: client.redirect_host,
    mode: choice.mode,
    ...(choice.automations ? { automations: [...new Set(choice.automations)] } : {}),
    created_at: deps.clock.now(),
    created_by: userId,
  };
  await deps.storage.transaction(async (tx) => {
    await tx.oauth.createGrant(record);
    await audit(deps, tx, {
      org_id: record.org_id,
      actor: userId,
      target: `oauth_grant:${record.id}`,
      action: 'oauth.grant',
      detail: {
        client: record.client_name,
        client_id: record.client_id,
        redirect_host: record.redirect_host,
        mode: record.mode,
        automations: record.automations ?? null,
      },
    });
  });
  const { req, res } = deps.oauth.nodePair(request);
  return p.interactionResult(req, res, { login: { accountId: userId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** Deny: the client is told `access_denied` at its redirect URI. */
export async function denyConsent(deps: ServiceDeps, request: Request, uid: string): Promise<string> {
  await interaction(deps, request, uid);
  const p = await deps.oauth.provider();
  const { req, res } = deps.oauth.nodePair(request);
  return p.interactionResult(req, res, { error: 'access_denied', error_description: 'the user denied access' }, { mergeWithLastSubmission: false });
}

/** Owners see every grant of the org; other members the grants they gave. */
export async function listGrants(deps: ServiceDeps, orgId: string, userId: string, owner: boolean): Promise<OAuthGrantRecord[]> {
  const all = await deps.storage.oauth.listGrants(orgId);
  return owner ? all : all.filter((g) => g.created_by === userId);
}

/**
 * Revoke a grant (an owner, or the member who gave it): marked revoked, and the library's tokens and
 * codes of it deleted, so its access token and refresh token stop working on the next request.
 */
export async function revokeGrant(deps: ServiceDeps, orgId: string, userId: string, owner: boolean, id: string): Promise<void> {
  const grant = (await listGrants(deps, orgId, userId, owner)).find((g) => g.id === id);
  if (!grant) throw serviceError('not_found', 'no such grant in this org');
  if (grant.revoked_at === undefined) {
    await deps.storage.transaction(async (tx) => {
      if (await tx.oauth.revokeGrant(orgId, id, deps.clock.now())) {
        await audit(deps, tx, { org_id: orgId, actor: userId, target: `oauth_grant:${id}`, action: 'oauth.revoke', detail: { client: grant.client_name } });
      }
    });
  }
  await deps.storage.oauth.revokeByGrant(grant.grant_hash);
}

export function grantJson(g: OAuthGrantRecord) {
  return {
    id: g.id,
    client_name: g.client_name,
    client_id: g.client_id,
    redirect_host: g.redirect_host,
    mode: g.mode,
    automations: g.automations ?? null,
    created_at: g.created_at,
    created_by: g.created_by,
    last_used_at: g.last_used_at ?? null,
    revoked_at: g.revoked_at ?? null,
  };
}
