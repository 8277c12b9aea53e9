import type { ServiceDeps } from '../context.js';
import { audit } from './audit.js';
import { SERVICE_ACTOR } from './site-status.js';

/**
 * The authorization server ended a grant by itself: oidc-provider revokes every token of a grant when
 * a used refresh token or authorization code is presented again (OAuth 2.1's reuse rule), or when the
 * client revokes its refresh token. The grant's row then says revoked too, so the web app never lists
 * as active a grant whose tokens are gone; audited as the service's own action, with the reason.
 */
export async function grantEndedByServer(deps: ServiceDeps, grantHash: string): Promise<void> {
  const grant = await deps.storage.oauth.grantByHash(grantHash);
  if (!grant || grant.revoked_at !== undefined) return;
  await deps.storage.transaction(async (tx) => {
    if (await tx.oauth.revokeGrant(grant.org_id, grant.id, deps.clock.now())) {
      await audit(deps, tx, {
        org_id: grant.org_id,
        actor: SERVICE_ACTOR,
        target: `oauth_grant:${grant.id}`,
        action: 'oauth.revoke',
        detail: { client: grant.client_name, reason: 'the authorization server revoked the grant (a reused refresh token or code, or the client revoked it)' },
      });
    }
  });
}
