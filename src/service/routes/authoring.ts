import { z } from '@hono/zod-openapi';
import { digestBytes } from '../../canonical.js';
import type { AuthoringRecord } from '../../ports/service-storage.js';
import { checkOps, IDENTIFIER } from '../../record/ops.js';
import type { ServiceDeps } from '../context.js';
import { checkCallerInputs, gatewayBodyInputs, runResult, runSync } from '../domain/dispatch.js';
import { compileCapture, orgSecretValues, publishVersion, reopenCapture, unknownSlotIssues } from '../domain/publish.js';
import { findOrgSecrets, leakMessage } from '../domain/secret-leak.js';
import { invalidRequest, serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { Automation, automationJson } from './automations.js';
import { RunResult } from './gateway.js';
import { IdParam } from '../schemas.js';

const TestBody = z
  .object({ inputs: z.record(z.string(), z.unknown()).optional().openapi({ description: 'Inputs by name; unset ones take their recorded samples' }) })
  .openapi('TestCaptureBody', { description: 'Only `inputs`, as the gateway', additionalProperties: false });

/** Authoring sessions, publish and reopen (docs/hosted-api.md, "Authoring"). */

const Slot = z.string().regex(IDENTIFIER).max(64);
const PatchSessionBody = z
  .object({
    captured_ops: z.array(z.unknown()).max(2000).optional(),
    input_params: z
      .array(z.object({ name: Slot, required: z.boolean(), sample: z.string().max(10_000) }))
      .max(200)
      .optional(),
    input_slots: z.array(Slot).max(200).optional(),
    secret_slots: z.array(Slot).max(200).optional(),
  })
  .openapi('PatchAuthoringBody');
const FileBody = z.object({ content_base64: z.string().max(1_400_000) }).openapi('AuthoringFileBody');
const FileParams = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^/\\\0]+$/, 'a file name, no folders')
    .refine((n) => n !== '.' && n !== '..', 'a file name')
    .openapi({ param: { name: 'name', in: 'path' } }),
});

export const Session = z
  .object({
    id: z.string(),
    automation_id: z.string(),
    captured_ops: z.array(z.unknown()),
    input_slots: z.array(z.string()),
    input_params: z.array(z.object({ name: z.string(), required: z.boolean(), sample: z.string() })),
    secret_slots: z.array(z.string()),
    updated_at: z.string(),
    error: z.string().nullable(),
    state: z.enum(['editing', 'published']),
    files: z.array(z.object({ name: z.string(), digest: z.string(), size: z.number() })),
    secret_names: z.record(z.string(), z.string()).openapi({ description: 'Secret slot -> the org secret it resolves (same name)' }),
  })
  .openapi('AuthoringSession');

export function sessionJson(s: AuthoringRecord) {
  return {
    id: s.automation_id,
    automation_id: s.automation_id,
    captured_ops: s.captured_ops,
    input_slots: s.input_slots,
    input_params: s.input_params,
    secret_slots: s.secret_slots,
    updated_at: s.updated_at,
    error: s.error ?? null,
    state: s.state,
    files: s.files,
    secret_names: Object.fromEntries(s.secret_slots.map((slot) => [slot, slot])),
  };
}

export function authoringRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  const load = async (orgId: string, id: string) => {
    const automation = await storage.automations.get(orgId, id);
    const session = automation ? await storage.authoring.get(orgId, id) : undefined;
    if (!automation || !session) throw serviceError('not_found', 'no such automation in this org');
    return { automation, session };
  };

  return [
    defineRoute(
      {
        method: 'get',
        path: '/api/authoring/{id}',
        auth: 'session',
        summary: 'The authoring session of an automation',
        tags: ['authoring'],
        request: { params: IdParam },
        responses: { 200: jsonResponse('The session', z.object({ session: Session })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        return c.json({ session: sessionJson((await load(c.get('auth').org.id, id)).session) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'patch',
        path: '/api/authoring/{id}',
        auth: 'session',
        summary: "Replace the capture (ops in the engine's format, params, slots); 409 `not_editable` while published",
        tags: ['authoring'],
        request: { params: IdParam, ...jsonBody(PatchSessionBody) },
        responses: {
          200: jsonResponse('The session', z.object({ session: Session })),
          409: jsonResponse('`not_editable`: published and not reopened', z.object({ error: z.string(), message: z.string() })),
          422: jsonResponse("`invalid_request`, or `secret_leak` when an op holds an org secret's value", z.object({ error: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const orgId = c.get('auth').org.id;
        const { session } = await load(orgId, id);
        if (session.state === 'published') throw serviceError('not_editable', 'the session is published: reopen it with POST /api/authoring/{id}/edit first');
        if (body.captured_ops !== undefined) {
          const { issues } = checkOps(body.captured_ops);
          // An empty capture is allowed while editing (publish needs at least one op).
          const real = body.captured_ops.length === 0 ? [] : issues;
          if (real.length > 0) {
            throw invalidRequest(
              real.map((i) => ({
                path: [
                  'captured_ops',
                  ...i.path
                    .replace(/^ops/, '')
                    .split(/[.[\]]+/)
                    .filter(Boolean)
                    .map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
                ],
                message: i.message,
                code: 'invalid_op',
              })),
            );
          }
        }
        const secretSlots = body.secret_slots ?? session.secret_slots;
        const inputSlots = body.input_slots ?? session.input_slots;
        const both = inputSlots.filter((s) => secretSlots.includes(s));
        if (both.length > 0)
          throw invalidRequest([{ path: ['secret_slots'], message: `slots ${both.join(', ')} are both input and secret slots`, code: 'slot_conflict' }]);
        // Every op's slot is one of the lists, as the capture stands after this PATCH.
        const unknown = unknownSlotIssues(body.captured_ops ?? session.captured_ops, inputSlots, secretSlots);
        if (unknown.length > 0) throw invalidRequest(unknown);
        // An org secret's value never enters the capture, not even a draft of it.
        const secrets = await orgSecretValues(deps, storage, orgId);
        const leaks = [...findOrgSecrets(body.captured_ops ?? [], 'ops', secrets), ...findOrgSecrets(body.input_params ?? [], 'input_params', secrets)];
        if (leaks.length > 0) throw serviceError('secret_leak', leakMessage(leaks), { findings: leaks });
        const updated = await storage.authoring.update(orgId, id, {
          ...(body.captured_ops !== undefined ? { captured_ops: body.captured_ops } : {}),
          ...(body.input_params !== undefined ? { input_params: body.input_params } : {}),
          ...(body.input_slots !== undefined ? { input_slots: body.input_slots } : {}),
          ...(body.secret_slots !== undefined ? { secret_slots: body.secret_slots } : {}),
          updated_at: deps.clock.now(),
        });
        return c.json({ session: sessionJson(updated!) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'put',
        path: '/api/authoring/{id}/files/{name}',
        auth: 'session',
        summary: 'Attach an upload file to the capture (an upload op names it by this file name)',
        tags: ['authoring'],
        request: { params: FileParams, ...jsonBody(FileBody) },
        responses: { 200: jsonResponse('The session', z.object({ session: Session })) },
      },
      async (c) => {
        const { id, name } = c.req.valid('param');
        const { content_base64 } = c.req.valid('json');
        const orgId = c.get('auth').org.id;
        const { session } = await load(orgId, id);
        if (session.state === 'published') throw serviceError('not_editable', 'the session is published: reopen it with POST /api/authoring/{id}/edit first');
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(content_base64))
          throw invalidRequest([{ path: ['content_base64'], message: 'must be base64', code: 'invalid_string' }]);
        const bytes = new Uint8Array(Buffer.from(content_base64, 'base64'));
        const digest = digestBytes(bytes);
        await storage.authoring.putFile(orgId, id, { name, digest, bytes });
        const files = [...session.files.filter((f) => f.name !== name), { name, digest, size: bytes.byteLength }].sort((a, b) => a.name.localeCompare(b.name));
        const updated = await storage.authoring.update(orgId, id, { files, updated_at: deps.clock.now() });
        return c.json({ session: sessionJson(updated!) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/authoring/{id}/publish',
        auth: 'owner',
        summary: 'Publish the capture as a new version, live at once',
        tags: ['authoring'],
        request: { params: IdParam },
        responses: {
          200: jsonResponse('The automation and the new live digest', z.object({ automation: Automation, flow_digest: z.string() })),
          422: jsonResponse('`secret_leak` (nothing stored), or `invalid_request` when the capture does not compile', z.object({ error: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org, user } = c.get('auth');
        const { automation, session } = await load(org.id, id);
        if (session.captured_ops.length === 0)
          throw invalidRequest([{ path: ['captured_ops'], message: 'capture at least one operation before publishing', code: 'too_small' }]);
        let compiled;
        try {
          compiled = await compileCapture(deps, storage, automation, session);
        } catch (err) {
          // The session keeps the last problem, in words (never a secret: messages name where, not what).
          const e = err as { code?: string; message?: string; data?: { issues?: { message: string }[] } };
          const words =
            e.code === 'invalid_request'
              ? (e.data?.issues ?? []).map((i) => i.message).join('; ')
              : (e.message ?? String(err)).replace(/^(\[[^\]]+\]\s*)+/, '');
          await storage.authoring.update(org.id, id, { error: words.slice(0, 2000) });
          throw err;
        }
        const updated = await publishVersion(deps, automation, compiled, user.id);
        return c.json({ automation: automationJson(deps, updated), flow_digest: updated.live_digest! }, 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/authoring/{id}/test',
        auth: 'owner',
        summary: 'Test the capture before publishing: compile it as publish does and run it once, in a fresh browser context, without publishing',
        tags: ['authoring'],
        request: { params: IdParam, body: { content: { 'application/json': { schema: TestBody } }, required: false } },
        responses: {
          200: jsonResponse('The test run (a failed run is 200 with `error`); listed among the executions like any sync run', RunResult),
          422: jsonResponse('`secret_leak`, or `invalid_request` when the capture does not compile or an input is wrong', z.object({ error: z.string() })),
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        // The gateway body shape, and its rule: only `inputs` (checked before anything compiles or runs).
        const bodyInputs = gatewayBodyInputs(c.get('body'));
        const { org } = c.get('auth');
        const engine = deps.engine;
        if (!engine) throw serviceError('not_ready', 'this service has no engine to run automations');
        const { automation, session } = await load(org.id, id);
        if (session.captured_ops.length === 0)
          throw invalidRequest([{ path: ['captured_ops'], message: 'capture at least one operation before testing', code: 'too_small' }]);
        // The same compile (and secret_leak check) as publish; the FlowSpec is stored by digest (it
        // is what the run executes) but no version is made and the live one stays live.
        const compiled = await compileCapture(deps, storage, automation, session);
        await engine.putSpec(compiled.spec);
        const inputs = checkCallerInputs(compiled.spec, bodyInputs);
        const run = await runSync(deps, { automation, digest: compiled.digest, spec: compiled.spec }, inputs, { kind: 'sync' });
        return c.json(runResult(run), 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/authoring/{id}/edit',
        auth: 'owner',
        summary: 'Reopen a published session for editing; the live version stays live until the next publish',
        tags: ['authoring'],
        request: { params: IdParam },
        responses: { 200: jsonResponse('The session', z.object({ session: Session })) },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const { org, user } = c.get('auth');
        const { automation, session } = await load(org.id, id);
        const updated = await reopenCapture(deps, automation, session, user.id);
        return c.json({ session: sessionJson(updated) }, 200);
      },
    ),
  ];
}
