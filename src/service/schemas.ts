import { z } from '@hono/zod-openapi';
import type { ApiKeyRecord, AuditRecord, OrgRecord } from '../ports/service-storage.js';

/** Shapes of the hosted API's resources (spec/hosted-service.md, "Resources"), shared by routes and OpenAPI. */

/** The `{id}` path parameter of the routes that name one resource (automation, session, execution, schedule, endpoint). */
export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

export const AUTOMATION_NAME = /^[a-z0-9][a-z0-9-]*$/;

export const Email = z.string().trim().toLowerCase().max(254).pipe(z.email()).openapi({ example: 'ada@example.com' });

export const User = z.object({ id: z.string(), email: z.string() }).openapi('User');
export const Org = z.object({ id: z.string(), name: z.string() }).openapi('Org');
export const RoleEnum = z.enum(['owner', 'member']);
export const Member = z.object({ user_id: z.string(), email: z.string(), role: RoleEnum, created_at: z.string() }).openapi('Member');
export const AuditEntry = z
  .object({ id: z.string(), org_id: z.string(), actor: z.string(), target: z.string(), at: z.string(), metadata: z.record(z.string(), z.unknown()) })
  .openapi('AuditEntry');
export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    mode: z.enum(['live', 'test']),
    prefix: z.string().openapi({ example: 'svc_live_AbCd' }),
    last4: z.string(),
    automations: z.array(z.string()).nullable(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi('ApiKey');

export const orgJson = (o: OrgRecord) => ({ id: o.id, name: o.name });

export const keyJson = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  mode: k.mode,
  prefix: k.prefix,
  last4: k.last4,
  automations: k.automations ?? null,
  created_at: k.created_at,
  last_used_at: k.last_used_at ?? null,
  revoked_at: k.revoked_at ?? null,
});

export const auditJson = (e: AuditRecord) => ({ id: e.id, org_id: e.org_id, actor: e.actor, target: e.target, at: e.at, metadata: e.metadata });
