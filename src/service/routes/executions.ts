import { z } from '@hono/zod-openapi';
import type { ExecutionRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { pageStart } from './paging.js';
import { IdParam } from '../schemas.js';

/** The executions index (docs/hosted-api.md, "Executions"): run_ref rows, the engine run dereferenced on fetch. */

const ListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ param: { name: 'limit', in: 'query' } }),
  cursor: z
    .string()
    .max(300)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' } }),
  flow: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ param: { name: 'flow', in: 'query' } }),
});
const ArtifactParams = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
  digest: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, 'an artifact digest: sha256:<64 lowercase hex>, as a step_succeeded entry lists it')
    .openapi({ param: { name: 'digest', in: 'path' }, example: `sha256:${'0'.repeat(64)}` }),
});

/** Media types an artifact is served as; anything else goes out as a download, never rendered. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg']);

export const Execution = z
  .object({
    id: z.string(),
    run_id: z.string(),
    automation_id: z.string(),
    flow: z.string(),
    flow_digest: z.string(),
    dispatch: z.enum(['sync', 'queue', 'schedule', 'mcp']),
    status: z.string(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    error_code: z.string().nullable(),
  })
  .openapi('Execution');

export const executionJson = (e: ExecutionRecord) => ({
  id: e.id,
  run_id: e.run_id,
  automation_id: e.automation_id,
  flow: e.flow,
  flow_digest: e.flow_digest,
  dispatch: e.dispatch,
  status: e.status,
  created_at: e.created_at,
  finished_at: e.finished_at ?? null,
  error_code: e.error_code ?? null,
});

const encodeCursor = (e: ExecutionRecord) => Buffer.from(JSON.stringify(['e1', e.created_at, e.id])).toString('base64url');
function decodeCursor(cursor: string): { created_at: string; id: string } | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v[0] === 'e1' && typeof v[1] === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(v[1]) && typeof v[2] === 'string')
      return { created_at: v[1], id: v[2] };
  } catch {
    /* not ours */
  }
  return undefined;
}

/** An execution by its run_ref id, or (scanned within the org only) by its engine run id. */
export async function findExecution(deps: ServiceDeps, orgId: string, id: string): Promise<ExecutionRecord | undefined> {
  return (await deps.storage.executions.get(orgId, id)) ?? (await deps.storage.executions.getByRunId(orgId, id));
}

export function executionRoutes(deps: ServiceDeps): ServiceRoute[] {
  return [
    defineRoute(
      {
        method: 'get',
        path: '/api/executions',
        auth: 'session',
        summary: "Runs of the org's automations, newest first",
        tags: ['executions'],
        request: { query: ListQuery },
        responses: { 200: jsonResponse('A page', z.object({ executions: z.array(Execution), next_cursor: z.string().nullable() })) },
      },
      async (c) => {
        const { limit, cursor, flow } = c.req.valid('query');
        const before = pageStart(cursor, decodeCursor);
        const rows = await deps.storage.executions.list(c.get('auth').org.id, { limit: limit + 1, ...(before ? { before } : {}), ...(flow ? { flow } : {}) });
        const page = rows.slice(0, limit);
        return c.json({ executions: page.map(executionJson), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/executions/{id}',
        auth: 'session',
        summary: 'One execution: its header, the engine Run and the journal (id: run_ref id or engine run id)',
        tags: ['executions'],
        request: { params: IdParam },
        responses: {
          200: jsonResponse(
            'The execution',
            z.object({ execution: Execution, run: z.record(z.string(), z.unknown()), journal: z.array(z.record(z.string(), z.unknown())) }),
          ),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const execution = await findExecution(deps, c.get('auth').org.id, id);
        const run = execution ? await deps.engine?.getRun(execution.run_id) : undefined;
        if (!execution || !run) throw serviceError('not_found', 'no such execution in this org');
        return c.json({ execution: executionJson(execution), run, journal: run.journal }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/executions/{id}/artifacts/{digest}',
        auth: 'session',
        summary: 'The bytes of a run artifact (a step screenshot) by its digest, as the journal lists it (id: run_ref id or engine run id)',
        tags: ['executions'],
        request: { params: ArtifactParams },
        responses: {
          200: {
            description: 'The artifact, `Cache-Control: private, max-age=31536000, immutable` (content-addressed), `ETag: "<digest>"`',
            content: { 'image/png': { schema: z.string().openapi({ format: 'binary' }) }, 'image/jpeg': { schema: z.string().openapi({ format: 'binary' }) } },
          },
          304: { description: 'Not modified (If-None-Match names the digest)' },
          404: jsonResponse(
            '`not_found`: no such execution in this org, or the digest is in none of its steps',
            z.object({ error: z.string(), message: z.string() }),
          ),
        },
      },
      async (c) => {
        const { id, digest } = c.req.valid('param');
        const execution = await findExecution(deps, c.get('auth').org.id, id);
        const run = execution ? await deps.engine?.getRun(execution.run_id) : undefined;
        if (!execution || !run) throw serviceError('not_found', 'no such execution in this org');
        // Artifacts are content-addressed and shared by every run of every org: only a digest this
        // run's own journal lists is served, so a digest seen elsewhere reads nothing here.
        const listed = run.journal.some((e) => e.event === 'step_succeeded' && (e.artifacts ?? []).includes(digest as never));
        const artifact = listed ? await deps.engine!.getArtifact(digest as never) : undefined;
        if (!artifact) throw serviceError('not_found', 'no such artifact in this run');
        const headers: Record<string, string> = {
          'cache-control': 'private, max-age=31536000, immutable',
          etag: `"${digest}"`,
          'content-type': IMAGE_TYPES.has(artifact.mediaType) ? artifact.mediaType : 'application/octet-stream',
        };
        if (!IMAGE_TYPES.has(artifact.mediaType))
          headers['content-disposition'] = `attachment; filename="${digest.slice('sha256:'.length, 'sha256:'.length + 16)}.bin"`;
        const match = c.req.header('if-none-match');
        if (match?.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${digest}"`)) return c.body(null, 304, headers);
        headers['content-length'] = String(artifact.bytes.byteLength);
        return c.body(artifact.bytes as never, 200, headers);
      },
    ),
  ];
}
