import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { checkCallerInputs, enqueueRun, gatewayBodyInputs, queueDispatch, runnableAutomation, runResult, runSync, secretInputsOf } from '../domain/dispatch.js';
import { serviceError } from '../errors.js';
import { jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';

/** The run gateway (spec "Run gateway"; docs/hosted-api.md): `POST /v1/run/{flow}` with a bearer key. */

const FlowParam = z.object({
  flow: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'flow', in: 'path' }, example: 'shop-search' }),
});
const RunBody = z
  .object({ inputs: z.record(z.string(), z.unknown()).optional().openapi({ description: 'The typed non-secret inputs by name' }) })
  .openapi('RunGatewayBody', {
    description: 'Only `inputs`: any other top-level key is 422 `invalid_request` (the inputs go under `inputs`)',
    additionalProperties: false,
  });

/** The queue-dispatch acknowledgement (spec "Queue-dispatch acknowledgement"). */
export const QueuedResult = z.object({ run_id: z.string(), status: z.literal('queued') }).openapi('QueuedRun');

export const RunResult = z
  .object({
    run_id: z.string(),
    status: z.enum(['pending', 'running', 'succeeded', 'failed', 'canceled']),
    flow_digest: z.string(),
    output: z.unknown(),
    error: z.object({ step: z.string().nullable(), code: z.string(), message: z.string() }).optional(),
  })
  .openapi('RunResult');

export function gatewayRoutes(deps: ServiceDeps): ServiceRoute[] {
  return [
    defineRoute(
      {
        method: 'post',
        path: '/v1/run/{flow}',
        auth: 'bearer',
        summary: 'Run a published automation (sync: the run result; a failed run is 200 with `error`)',
        tags: ['gateway'],
        request: { params: FlowParam, body: { content: { 'application/json': { schema: RunBody } }, required: false } },
        responses: {
          200: jsonResponse(
            'The run result (discriminate on status); with SVC_RUN_DISPATCH=queue, `{run_id, status: "queued"}` at once',
            z.union([RunResult, QueuedResult]),
          ),
          503: jsonResponse(
            '`queue_unavailable`: queue dispatch could not store the run (nothing was started)',
            z.object({ error: z.string(), message: z.string() }),
          ),
          422: jsonResponse(
            '`invalid_request`: a top-level key other than `inputs` (issue at that key, naming `inputs`), a secret input, or inputs the FlowSpec refuses; `secret_not_found`',
            z.object({ error: z.string() }),
          ),
          403: jsonResponse('`test_key_forbidden`: a svc_test_ key on an automation with a secret input', z.object({ error: z.string(), message: z.string() })),
          404: jsonResponse("`not_found`: unknown, draft, or outside the key's scope (one answer)", z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { flow } = c.req.valid('param');
        const body = c.get('body');
        const { record: key, org } = c.get('key');
        const target = await runnableAutomation(deps, org.id, flow, key.automations);
        if (!target) throw serviceError('not_found', 'no published automation of this name for this key');
        if (key.mode === 'test' && secretInputsOf(target.spec).length > 0) {
          throw serviceError('test_key_forbidden', 'this automation uses production credentials (a secret input): call it with a svc_live_ key');
        }
        const inputs = checkCallerInputs(target.spec, gatewayBodyInputs(body));
        if (queueDispatch(deps)) {
          const queued = await enqueueRun(deps, target, inputs, { kind: 'queue', keyId: key.id });
          return c.json({ run_id: queued.run_id, status: 'queued' as const }, 200);
        }
        // The run goes on if the caller hangs up; its outcome is recorded either way.
        const run = await runSync(deps, target, inputs, { kind: 'sync', keyId: key.id });
        return c.json(runResult(run), 200);
      },
    ),
  ];
}
