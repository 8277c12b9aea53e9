import type { ApiKeyRecord } from '../../ports/service-storage.js';
import { hashApiKey, mintApiKey, parseApiKey } from '../auth/api-keys.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { audit } from './audit.js';

/** API keys (docs/hosted-api.md, "API keys"): minted and revoked by owners, both audited. */

/** Mint a key: its record, and its plaintext secret (shown to the caller this once). */
export async function mintKey(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  body: { mode: 'live' | 'test'; name?: string; automations?: string[] },
): Promise<{ record: ApiKeyRecord; secret: string }> {
  const secret = mintApiKey(body.mode);
  const parsed = parseApiKey(secret)!;
  const record: ApiKeyRecord = {
    id: deps.ids.uuid(),
    org_id: orgId,
    name: body.name ?? `${body.mode} key`,
    mode: body.mode,
    hash: hashApiKey(secret),
    prefix: parsed.prefix,
    last4: parsed.last4,
    ...(body.automations ? { automations: [...new Set(body.automations)] } : {}),
    created_at: deps.clock.now(),
    created_by: actor,
  };
  await deps.storage.transaction(async (tx) => {
    await tx.apiKeys.create(record);
    await audit(deps, tx, {
      org_id: orgId,
      actor,
      target: `key:${record.id}`,
      action: 'key.mint',
      detail: { name: record.name, mode: record.mode, prefix: record.prefix, automations: record.automations ?? null },
    });
  });
  return { record, secret };
}

/** Revoke a key of the org (not_found when it has none of that id); revoking a revoked key changes nothing. */
export async function revokeKey(deps: ServiceDeps, orgId: string, actor: string, id: string): Promise<void> {
  const key = (await deps.storage.apiKeys.list(orgId)).find((k) => k.id === id);
  if (!key) throw serviceError('not_found', 'no such key in this org');
  if (key.revoked_at !== undefined) return;
  await deps.storage.transaction(async (tx) => {
    if (await tx.apiKeys.revoke(orgId, id, deps.clock.now())) {
      await audit(deps, tx, { org_id: orgId, actor, target: `key:${id}`, action: 'key.revoke', detail: { name: key.name, prefix: key.prefix } });
    }
  });
}
