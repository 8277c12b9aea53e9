import { z } from '@hono/zod-openapi';
import { FlowError } from '../../errors.js';
import type { SecretStore } from '../../ports/secrets.js';
import { isSecretRef } from '../../secrets/refs.js';
import type { ServiceStores } from '../../ports/service-storage.js';
import { audit, type ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';

/** The org secret store (docs/hosted-api.md, "Secrets"): values go in, never out. */

export const SECRET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const NameParam = z.object({
  name: z
    .string()
    .regex(SECRET_NAME, 'letters, digits, _ . -; at most 128')
    .openapi({ param: { name: 'name', in: 'path' } }),
});
const SetSecretBody = z.object({ value: z.string().min(1).max(65_536) }).openapi('SetSecretBody');
const SecretMeta = z.object({ name: z.string(), updated_at: z.string() }).openapi('Secret');

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

export function secretRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  return [
    defineRoute(
      {
        method: 'put',
        path: '/api/secrets/{name}',
        auth: 'owner',
        summary: 'Set an org secret (encrypted at rest); the value is never returned by any route',
        tags: ['secrets'],
        request: { params: NameParam, ...jsonBody(SetSecretBody) },
        responses: { 200: jsonResponse("The secret's name and time", z.object({ secret: SecretMeta })) },
      },
      async (c) => {
        const { name } = c.req.valid('param');
        const { value } = c.req.valid('json');
        const { org, user } = c.get('auth');
        const now = deps.clock.now();
        const existed = await storage.secrets.get(org.id, name);
        await storage.transaction(async (tx) => {
          await tx.secrets.put({ org_id: org.id, name, ciphertext: deps.box.seal(org.id, name, value), updated_at: now });
          await audit(deps, tx, { org_id: org.id, actor: user.id, target: `secret:${name}`, action: existed ? 'secret.update' : 'secret.create' });
        });
        return c.json({ secret: { name, updated_at: now } }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/secrets',
        auth: 'session',
        summary: "The org's secrets: names and times only",
        tags: ['secrets'],
        responses: { 200: jsonResponse('Secrets', z.object({ secrets: z.array(SecretMeta) })) },
      },
      async (c) => c.json({ secrets: (await storage.secrets.list(c.get('auth').org.id)).map((s) => ({ name: s.name, updated_at: s.updated_at })) }, 200),
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/secrets/{name}',
        auth: 'owner',
        summary: 'Delete an org secret',
        tags: ['secrets'],
        request: { params: NameParam },
        responses: { 204: { description: 'Deleted' } },
      },
      async (c) => {
        const { name } = c.req.valid('param');
        const { org, user } = c.get('auth');
        await storage.transaction(async (tx) => {
          if (!(await tx.secrets.delete(org.id, name))) throw serviceError('not_found', 'no such secret in this org');
          await audit(deps, tx, { org_id: org.id, actor: user.id, target: `secret:${name}`, action: 'secret.delete' });
        });
        return c.body(null, 204);
      },
    ),
  ];
}

/** Re-seal every secret of an org under the newest key (after adding a key to SVC_SECRETS_KEY). */
export async function reencryptOrgSecrets(deps: Pick<ServiceDeps, 'box' | 'clock'>, stores: ServiceStores, orgId: string): Promise<number> {
  let changed = 0;
  for (const rec of await stores.secrets.list(orgId)) {
    if (deps.box.isCurrent(rec.ciphertext)) continue;
    const value = deps.box.open(orgId, rec.name, rec.ciphertext);
    await stores.secrets.put({ ...rec, ciphertext: deps.box.seal(orgId, rec.name, value) });
    changed++;
  }
  return changed;
}
