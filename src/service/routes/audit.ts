import { z } from '@hono/zod-openapi';
import { verifyAuditChain } from '../../audit/chain.js';
import type { ServiceDeps } from '../context.js';
import { jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { pageStart } from './paging.js';
import { AuditEntry, auditJson } from '../schemas.js';

/** The audit log (docs/hosted-api.md, "Audit log"): newest first, opaque cursor, hash-chained per org. */

const AuditQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ param: { name: 'limit', in: 'query' }, example: 50 }),
  cursor: z
    .string()
    .max(200)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' } }),
});

/** Cursors are opaque to clients: `a1.<seq>` in base64url. */
export const encodeAuditCursor = (seq: number) => Buffer.from(`a1.${seq}`).toString('base64url');

export function decodeAuditCursor(cursor: string): number | undefined {
  const m = /^a1\.(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

export function auditRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  return [
    defineRoute(
      {
        method: 'get',
        path: '/api/audit',
        auth: 'owner',
        summary: 'Audit log of the active org, newest first',
        tags: ['audit'],
        request: { query: AuditQuery },
        responses: { 200: jsonResponse('A page of entries', z.object({ entries: z.array(AuditEntry), next_cursor: z.string().nullable() })) },
      },
      async (c) => {
        const { limit, cursor } = c.req.valid('query');
        const beforeSeq = pageStart(cursor, decodeAuditCursor);
        const page = await storage.audit.page(c.get('auth').org.id, { limit, ...(beforeSeq !== undefined ? { beforeSeq } : {}) });
        return c.json(
          { entries: page.entries.map(auditJson), next_cursor: page.nextBeforeSeq === undefined ? null : encodeAuditCursor(page.nextBeforeSeq) },
          200,
        );
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/audit/verify',
        auth: 'owner',
        summary: "Verify the org's audit hash chain",
        tags: ['audit'],
        responses: {
          200: jsonResponse(
            'The verdict; `broken` names the first entry that does not verify',
            z.object({
              ok: z.boolean(),
              entries: z.number(),
              broken: z.object({ seq: z.number(), id: z.string(), reason: z.enum(['digest', 'prev', 'seq', 'org']) }).optional(),
            }),
          ),
        },
      },
      async (c) => {
        const orgId = c.get('auth').org.id;
        return c.json(verifyAuditChain(orgId, await storage.audit.all(orgId)), 200);
      },
    ),
  ];
}
