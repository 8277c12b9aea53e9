import { z } from '@hono/zod-openapi';
import type { AutomationRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { createAutomation, liveSpec, mustGetAutomation, rollbackAutomation, updateAutomation } from '../domain/automations.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { AUTOMATION_NAME, IdParam } from '../schemas.js';

/** Automations, versions, rollback and the live FlowSpec by name (docs/hosted-api.md, "Automations"). */

const Param = z.object({ name: z.string(), required: z.boolean().optional(), sample: z.string().optional() }).passthrough();
const CreateAutomationBody = z
  .object({
    name: z.string().min(1).max(64).regex(AUTOMATION_NAME),
    site: z.string().min(1),
    task: z.string().optional(),
    params: z.array(Param).max(200).optional(),
  })
  .openapi('CreateAutomationBody');
const PatchAutomationBody = z
  .object({ site: z.string().min(1).optional(), task: z.string().optional(), mcp_enabled: z.boolean().optional() })
  .openapi('PatchAutomationBody');
const RollbackBody = z.object({ flow_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/) }).openapi('RollbackBody');
const NameParam = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'name', in: 'path' } }),
});

export const Automation = z
  .object({
    id: z.string(),
    org_id: z.string(),
    name: z.string(),
    task: z.string(),
    site: z.string(),
    mcp_enabled: z.boolean(),
    created_at: z.string(),
    live_digest: z.string().nullable(),
    calls_7d: z.number().int(),
    last_run_at: z.string().nullable(),
    needs_attention: z.boolean(),
    rerecord_href: z.string().nullable(),
    status: z.enum(['draft', 'published', 'failing']),
  })
  .openapi('Automation');

export const Version = z.object({ flow_digest: z.string(), created_at: z.string(), created_by: z.string() }).openapi('Version');

/** The Automation resource (`calls_7d` and `last_run_at` come from the executions index). */
export function automationJson(
  deps: ServiceDeps,
  a: AutomationRecord,
  usage: { calls_7d: number; last_run_at: string | null } = { calls_7d: 0, last_run_at: null },
) {
  const base = deps.settings.publicUrl.replace(/\/+$/, '');
  return {
    id: a.id,
    org_id: a.org_id,
    name: a.name,
    task: a.task,
    site: a.site,
    mcp_enabled: a.mcp_enabled,
    created_at: a.created_at,
    live_digest: a.live_digest ?? null,
    calls_7d: usage.calls_7d,
    last_run_at: usage.last_run_at,
    needs_attention: a.needs_attention,
    // Failing, or degraded (published, a step that succeeded only through a fallback): re-record it.
    rerecord_href:
      a.status === 'failing' || (a.needs_attention && a.failing_step)
        ? `${base}/automations/${a.id}/studio${a.failing_step ? `?step=${encodeURIComponent(a.failing_step)}` : ''}`
        : null,
    status: a.status,
  };
}

/** `calls_7d` and `last_run_at` of the org's automations, from the executions index. */
export async function usageOf(deps: ServiceDeps, orgId: string): Promise<(id: string) => { calls_7d: number; last_run_at: string | null }> {
  const since = new Date(Date.parse(deps.clock.now()) - 7 * 24 * 3600 * 1000).toISOString();
  const usage = await deps.storage.executions.usage(orgId, since);
  return (id) => {
    const u = usage.get(id);
    return { calls_7d: u?.calls ?? 0, last_run_at: u?.last_run_at ?? null };
  };
}

export function automationRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  const mustGet = (orgId: string, id: string) => mustGetAutomation(deps, orgId, id);

  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/automations',
        auth: 'session',
        summary: 'Create a draft automation and its authoring session',
        tags: ['automations'],
        request: jsonBody(CreateAutomationBody),
        responses: {
          201: jsonResponse('The draft', z.object({ automation: Automation })),
          409: jsonResponse('`name_taken`', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { org, user } = c.get('auth');
        const automation = await createAutomation(deps, org.id, user.id, c.req.valid('json'));
        return c.json({ automation: automationJson(deps, automation) }, 201);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/automations',
        auth: 'session',
        summary: "The org's automations, oldest first",
        tags: ['automations'],
        responses: { 200: jsonResponse('Automations', z.object({ automations: z.array(Automation) })) },
      },
      async (c) => {
        const orgId = c.get('auth').org.id;
        const usage = await usageOf(deps, orgId);
        return c.json({ automations: (await storage.automations.list(orgId)).map((a) => automationJson(deps, a, usage(a.id))) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/automations/{id}',
        auth: 'session',
        summary: 'One automation, with its status',
        tags: ['automations'],
        request: { params: IdParam },
        responses: { 200: jsonResponse('The automation', z.object({ automation: Automation })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const orgId = c.get('auth').org.id;
        const a = await mustGet(orgId, id);
        return c.json({ automation: automationJson(deps, a, (await usageOf(deps, orgId))(a.id)) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'patch',
        path: '/api/automations/{id}',
        auth: 'session',
        summary: 'Correct `site` or `task` (members); `mcp_enabled` is owner only and audited',
        tags: ['automations'],
        request: { params: IdParam, ...jsonBody(PatchAutomationBody) },
        responses: { 200: jsonResponse('The automation', z.object({ automation: Automation })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const { org, user, role } = c.get('auth');
        const updated = await updateAutomation(deps, { orgId: org.id, actor: user.id, role }, id, body);
        return c.json({ automation: automationJson(deps, updated) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/automations/{id}/versions',
        auth: 'session',
        summary: 'Published versions, newest first',
        tags: ['automations'],
        request: { params: IdParam },
        responses: { 200: jsonResponse('Versions', z.object({ versions: z.array(Version) })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const orgId = c.get('auth').org.id;
        await mustGet(orgId, id);
        const versions = await storage.versions.list(orgId, id);
        return c.json({ versions: versions.map((v) => ({ flow_digest: v.flow_digest, created_at: v.created_at, created_by: v.created_by })) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/automations/{id}/rollback',
        auth: 'owner',
        summary: 'Point the live version at an earlier one; nothing is rebuilt',
        tags: ['automations'],
        request: { params: IdParam, ...jsonBody(RollbackBody) },
        responses: { 200: jsonResponse('The automation', z.object({ automation: Automation })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { flow_digest } = c.req.valid('json');
        const { org, user } = c.get('auth');
        const updated = await rollbackAutomation(deps, org.id, user.id, id, flow_digest);
        return c.json({ automation: automationJson(deps, updated) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/flowspecs/{name}',
        auth: 'session',
        summary: 'The live FlowSpec of an automation by name: the bytes the gateway executes',
        tags: ['automations'],
        request: { params: NameParam },
        responses: {
          200: { description: 'The FlowSpec JSON; `ETag: "<flow_digest>"`', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
        },
      },
      async (c) => {
        const { name } = c.req.valid('param');
        const spec = await liveSpec(deps, c.get('auth').org.id, name);
        // One answer for unknown, other orgs' and draft names: the same code path and the same body.
        if (!spec) throw serviceError('not_found', 'no published automation of this name in this org');
        // c.json writes JSON.stringify of it, as before; its default Content-Type is replaced (same key).
        return c.json(spec.spec, 200, { 'Content-Type': 'application/json; charset=utf-8', etag: `"${spec.digest}"` });
      },
    ),
  ];
}
