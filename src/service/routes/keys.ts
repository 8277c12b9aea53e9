import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { mintKey, revokeKey } from '../domain/keys.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { ApiKey, AUTOMATION_NAME, keyJson } from '../schemas.js';

/** API keys (docs/hosted-api.md, "API keys"). */

const MintKeyBody = z
  .object({
    mode: z.enum(['live', 'test']),
    name: z.string().trim().min(1).max(120).optional(),
    automations: z
      .array(z.string().min(1).max(64).regex(AUTOMATION_NAME))
      .max(200)
      .optional()
      .openapi({ description: 'Scope allowlist of automation names; absent: every automation of the org' }),
  })
  .openapi('MintKeyBody');
const KeyIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

export function keyRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/keys',
        auth: 'owner',
        summary: 'Mint an API key; `secret` is the plaintext, shown this once',
        tags: ['keys'],
        request: jsonBody(MintKeyBody),
        responses: { 201: jsonResponse('The key record and its secret', z.object({ key: ApiKey, secret: z.string().openapi({ example: 'svc_live_…' }) })) },
      },
      async (c) => {
        const { org, user } = c.get('auth');
        const { record, secret } = await mintKey(deps, org.id, user.id, c.req.valid('json'));
        return c.json({ key: keyJson(record), secret }, 201);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/keys',
        auth: 'owner',
        summary: "The org's keys, newest first; never a secret",
        tags: ['keys'],
        responses: { 200: jsonResponse('Keys', z.object({ keys: z.array(ApiKey) })) },
      },
      async (c) => c.json({ keys: (await storage.apiKeys.list(c.get('auth').org.id)).map(keyJson) }, 200),
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/keys/{id}',
        auth: 'owner',
        summary: 'Revoke a key: it stops working on the next request',
        tags: ['keys'],
        request: { params: KeyIdParam },
        responses: { 204: { description: 'Revoked (also when it already was)' } },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org, user } = c.get('auth');
        await revokeKey(deps, org.id, user.id, id);
        return c.body(null, 204);
      },
    ),
  ];
}
