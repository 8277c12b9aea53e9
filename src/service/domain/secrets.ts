import { FlowError } from '../../errors.js';
import type { SecretStore } from '../../ports/secrets.js';
import type { ServiceStores } from '../../ports/service-storage.js';
import { isSecretRef } from '../../secrets/refs.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { audit } from './audit.js';

/** The org secret store (docs/hosted-api.md, "Secrets"): values go in, never out. */

export const SECRET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * The engine's SecretStore port over one org's secrets: `secret:<name>` opens the org secret of that
 * name. Scoped to the org it was made for; another org's secret of the same name is not reachable.
 */
export function orgSecretStore(deps: ServiceDeps, stores: ServiceStores, orgId: string): SecretStore {
  return {
    name: 'org-secrets',
    async resolve(ref: string) {
      if (!isSecretRef(ref))
        throw new FlowError('invalid_secret_ref', `[flowctl] [service] "${String(ref).slice(0, 128)}" is not a secret reference (secret:<name>)`);
      const name = ref.slice('secret:'.length);
      const rec = SECRET_NAME.test(name) ? await stores.secrets.get(orgId, name) : undefined;
      if (!rec)
        throw new FlowError(
          'secret_not_found',
          `[flowctl] [service] the org has no secret "${name.slice(0, 128)}" (set it with PUT /api/secrets/${name.slice(0, 128)})`,
        );
      return deps.box.open(orgId, name, rec.ciphertext);
    },
  };
}

/** Set (seal) an org secret, audited as a create or an update; answers its time. */
export async function setSecret(deps: ServiceDeps, orgId: string, actor: string, name: string, value: string): Promise<string> {
  const now = deps.clock.now();
  const existed = await deps.storage.secrets.get(orgId, name);
  await deps.storage.transaction(async (tx) => {
    await tx.secrets.put({ org_id: orgId, name, ciphertext: deps.box.seal(orgId, name, value), updated_at: now });
    await audit(deps, tx, { org_id: orgId, actor, target: `secret:${name}`, action: existed ? 'secret.update' : 'secret.create' });
  });
  return now;
}

/** Delete an org secret (not_found when the org has none of that name), audited. */
export async function deleteSecret(deps: ServiceDeps, orgId: string, actor: string, name: string): Promise<void> {
  await deps.storage.transaction(async (tx) => {
    if (!(await tx.secrets.delete(orgId, name))) throw serviceError('not_found', 'no such secret in this org');
    await audit(deps, tx, { org_id: orgId, actor, target: `secret:${name}`, action: 'secret.delete' });
  });
}
