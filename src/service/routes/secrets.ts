import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { deleteSecret, SECRET_NAME, setSecret } from '../domain/secrets.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';

/** The org secret store (docs/hosted-api.md, "Secrets"): values go in, never out. */

const NameParam = z.object({
  name: z
    .string()
    .regex(SECRET_NAME, 'letters, digits, _ . -; at most 128')
    .openapi({ param: { name: 'name', in: 'path' } }),
});
const SetSecretBody = z.object({ value: z.string().min(1).max(65_536) }).openapi('SetSecretBody');
export const SecretMeta = z.object({ name: z.string(), updated_at: z.string() }).openapi('Secret');

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
        const now = await setSecret(deps, org.id, user.id, name, value);
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
        await deleteSecret(deps, org.id, user.id, name);
        return c.body(null, 204);
      },
    ),
  ];
}
