import { z } from 'zod';
import type { Digest } from '../canonical.js';
import type { FlowSpec } from '../flow/types.js';
import { RunSchema } from '../run/run-schema.js';
import type { JsonSchema } from '../tools/types.js';
import { REPLAY_BODY_SCHEMA, RUN_ID_SCHEMA, RUN_MODE_SCHEMA } from './request-schemas.js';

/** What the OpenAPI document needs to know of one served flow. */
export interface OpenApiFlow {
  name: string;
  digest: Digest;
  spec: FlowSpec;
  /** The request body schema that validates POST /flows/{name}/runs (request-schemas.ts). */
  bodySchema: JsonSchema;
}

export interface OpenApiOptions {
  /** Whether the launcher requires a bearer token (adds the security scheme). */
  bearer: boolean;
  /** Request body limit in bytes, stated in the document. */
  maxBodyBytes: number;
  /** `info.version` (default `1`). */
  version?: string;
}

let runComponent: JsonSchema | undefined;

/** The Run schema, generated from the same zod schema that guards every Run the engine returns. */
function runSchema(): JsonSchema {
  if (!runComponent) {
    const { $schema: _drop, ...schema } = z.toJSONSchema(RunSchema, { target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
    runComponent = schema;
  }
  return runComponent;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const answer = (description: string, schema: unknown) => ({ description, ...json(schema) });

function errorResponses(codes: number[], schemaName = 'Error'): Record<string, unknown> {
  const text: Record<number, string> = {
    400: 'Malformed request (bad JSON, bad `mode`, run id not a uuid)',
    401: 'Missing or wrong bearer token',
    403: "No token set: a Host that is not loopback, or a write from another site's Origin",
    404: 'Unknown flow or run',
    405: 'Method not allowed (see the Allow header)',
    409: 'Replay diverged from the recorded run',
    413: 'Request body over the limit',
    415: 'Body not application/json (UTF-8), or a content or transfer coding the launcher does not decode',
    422: "The body violates the flow's inputs contract; no run started",
  };
  const out: Record<string, unknown> = {};
  // 401 and 403 are answered before routing, always as {error, message}.
  for (const c of codes) out[String(c)] = answer(text[c]!, ref(c === 422 ? 'InputsError' : c === 401 || c === 403 ? 'Error' : schemaName));
  return out;
}

function operationId(name: string): string {
  return `run_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/**
 * The launcher's OpenAPI 3.1 document: one concrete `POST /flows/<name>/runs` per served flow with
 * its inputs body schema, plus the fixed routes. Request schemas are the objects the launcher
 * validates with; the Run schema comes from the engine's RunSchema.
 */
export function buildOpenApi(flows: readonly OpenApiFlow[], options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    Run: runSchema(),
    RunAccepted: {
      type: 'object',
      properties: { run_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['pending', 'running', 'succeeded', 'failed', 'canceled'] } },
      required: ['run_id', 'status'],
      additionalProperties: false,
    },
    Error: {
      type: 'object',
      properties: { error: { type: 'string' }, message: { type: 'string' } },
      required: ['error', 'message'],
    },
    InputsError: {
      type: 'object',
      properties: {
        error: { const: 'invalid_inputs' },
        message: { type: 'string' },
        issues: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' }, message: { type: 'string' } },
            required: ['path', 'message'],
          },
        },
      },
      required: ['error', 'issues'],
    },
    ReplayError: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, data: {} },
      required: ['code', 'message'],
    },
    ReplayRequest: REPLAY_BODY_SCHEMA,
    FlowList: {
      type: 'object',
      properties: {
        flows: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              digest: { type: 'string' },
              description: { type: 'string' },
              inputs: { type: 'object', description: 'JSON Schema of the run body; secret inputs carry x-flowctl-secret: true' },
              secret_inputs: { type: 'array', items: { type: 'string' } },
              runs_path: { type: 'string' },
            },
            required: ['name', 'digest', 'inputs', 'secret_inputs', 'runs_path'],
          },
        },
      },
      required: ['flows'],
    },
  };

  for (const flow of [...flows].sort((a, b) => a.name.localeCompare(b.name))) {
    const inputsName = `Inputs_${operationId(flow.name).slice(4)}`;
    schemas[inputsName] = flow.bodySchema;
    paths[`/flows/${encodeURIComponent(flow.name)}/runs`] = {
      post: {
        operationId: operationId(flow.name),
        summary: flow.spec.description ?? `Run the flow ${flow.name}`,
        description: `Runs ${flow.name} at ${flow.digest}. Sync by default (the finished Run); ?mode=async answers 202 at once.`,
        tags: ['flows'],
        parameters: [{ name: 'mode', in: 'query', required: false, schema: RUN_MODE_SCHEMA }],
        requestBody: {
          required: false,
          description: "The flow's inputs by name, as application/json (an empty body is {}; null is not an object)",
          ...json(ref(inputsName)),
        },
        responses: {
          '200': answer('The finished Run (sync); a failed run is a Run with status failed', ref('Run')),
          '202': answer('Run started (async); poll GET /runs/{id}', ref('RunAccepted')),
          ...errorResponses([400, 401, 403, 404, 405, 413, 415, 422]),
        },
      },
    };
  }
  const idParam = { name: 'id', in: 'path', required: true, schema: RUN_ID_SCHEMA };
  paths['/flows'] = {
    get: {
      operationId: 'list_flows',
      summary: 'Discovery: the served flows',
      responses: { '200': answer('The served flows', ref('FlowList')), ...errorResponses([401, 403]) },
    },
  };
  paths['/runs/{id}'] = {
    get: {
      operationId: 'get_run',
      summary: 'A Run by id (non-terminal status while in flight)',
      parameters: [idParam],
      responses: { '200': answer('The Run', ref('Run')), ...errorResponses([400, 401, 403, 404]) },
    },
  };
  paths['/runs/{id}/replay'] = {
    post: {
      operationId: 'replay_run',
      summary: 'Replay a run: verify (default, hermetic with digest checks) or rerun (re-fires effects live)',
      parameters: [idParam],
      requestBody: { required: false, ...json(ref('ReplayRequest')) },
      responses: { '200': answer('The replay Run', ref('Run')), ...errorResponses([400, 401, 403, 404, 409, 413, 415], 'ReplayError') },
    },
  };
  paths['/openapi.json'] = {
    get: { operationId: 'openapi', summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1 document' }, ...errorResponses([401, 403]) } },
  };

  const doc: Record<string, unknown> = {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'flowctl REST launcher',
      version: options.version ?? '1',
      description: `Runs deployed flows by name. Request bodies are limited to ${options.maxBodyBytes} bytes. See docs/rest.md.`,
    },
    paths,
    components: { schemas } as Record<string, unknown>,
  };
  if (options.bearer) {
    (doc.components as Record<string, unknown>).securitySchemes = { bearer: { type: 'http', scheme: 'bearer' } };
    doc.security = [{ bearer: [] }];
  }
  return doc;
}
