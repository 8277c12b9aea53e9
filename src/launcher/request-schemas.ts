import { callerInputSchema } from '../flow/inputs.js';
import type { FlowSpec, InputContract } from '../flow/types.js';
import { SECRET_REF_PATTERN } from '../ports/secrets.js';
import { secretRefRefused, type InputIssue } from '../run/inputs.js';
import { declaredSecretRef, isSecretRef } from '../secrets/refs.js';
import { validateAgainstSchema } from '../tools/contract.js';
import type { JsonSchema } from '../tools/types.js';

/**
 * The JSON Schemas that validate launcher requests. The OpenAPI document (openapi.ts) embeds these
 * same objects, so what the document promises is exactly what the launcher checks.
 */

/** Marks a secret input in the discovery list and OpenAPI: the value must be a `secret:<name>` reference. */
export const SECRET_MARK = 'x-flowctl-secret';

/** `?mode=` of POST /flows/{name}/runs. */
export const RUN_MODE_SCHEMA: JsonSchema = { type: 'string', enum: ['sync', 'async'], default: 'sync' };

/** Body of POST /runs/{id}/replay (an empty body means `{}`). */
export const REPLAY_BODY_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { mode: { type: 'string', enum: ['verify', 'rerun'], default: 'verify' } },
  additionalProperties: false,
};

/** Path parameter `id` of /runs/{id} and /runs/{id}/replay: a run id is a uuid. */
export const RUN_ID_SCHEMA: JsonSchema = {
  type: 'string',
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
};
export const RUN_ID_PATTERN = new RegExp(RUN_ID_SCHEMA.pattern as string);

/** Options of the request schemas; they must match the engine's (EngineOptions). */
export interface RequestSchemaOptions {
  /** Callers may name any secret for a secret input (`serve --allow-secret-refs`). Default false. */
  allowSecretRefs?: boolean;
}

function inputSchema(name: string, contract: InputContract, options: RequestSchemaOptions): JsonSchema {
  const description = contract.description ?? (contract.schema.description as string | undefined);
  if (contract.secret) {
    // Whatever the compiled contract says, over HTTP a secret input only ever takes a reference,
    // and (unless references are allowed) only the one its flow declares.
    const declared = declaredSecretRef(name, contract);
    return {
      type: 'string',
      ...(options.allowSecretRefs === true ? { pattern: SECRET_REF_PATTERN.source } : { enum: [declared] }),
      description:
        description ?? (options.allowSecretRefs === true ? 'a secret reference, secret:<name>' : `the secret reference ${declared} (the only one accepted)`),
      writeOnly: true,
      [SECRET_MARK]: true,
    };
  }
  return callerInputSchema(contract);
}

/**
 * The request body schema of POST /flows/{name}/runs: an object of the flow's inputs by name.
 * Inputs with a default, and secret inputs (which default to the reference their flow declares), are
 * optional; names the flow does not declare are refused. A secret input accepts only its declared
 * reference unless `options.allowSecretRefs`.
 */
export function inputsBodySchema(spec: FlowSpec, options: RequestSchemaOptions = {}): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, contract] of Object.entries(spec.inputs)) {
    properties[name] = inputSchema(name, contract, options);
    if (contract.required && contract.default === undefined && !contract.secret) required.push(name);
  }
  return { type: 'object', properties, required: required.sort(), additionalProperties: false };
}

export type BodyValidator = (body: unknown) => InputIssue[];

/**
 * A validator that lists every issue of a body, with the project's one JSON Schema validator
 * (src/tools/contract.ts). Issues never carry the offending values: they may be secrets.
 */
export function compileBodyValidator(schema: JsonSchema): BodyValidator {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const isObjectBody = schema.type === 'object';
  return (body) => {
    const { ok, issues } = validateAgainstSchema(schema, body);
    if (ok) return [];
    return issues.map((issue) => {
      const top = issue.path.split(/[.[]/)[0]!;
      if (issue.path === '' && isObjectBody && (body === null || typeof body !== 'object' || Array.isArray(body))) {
        return { path: '', message: 'the body must be a JSON object' };
      }
      if (issue.path !== '' && !(top in properties)) return { path: issue.path, message: 'is not an input of this flow' };
      if (issue.path === top && properties[top]?.[SECRET_MARK] === true && issue.message !== 'is required') {
        const pinned = properties[top]!.enum;
        const given = (body as Record<string, unknown>)[top];
        if (Array.isArray(pinned) && typeof pinned[0] === 'string' && isSecretRef(given)) return { path: issue.path, message: secretRefRefused(pinned[0]) };
        return { path: issue.path, message: 'is a secret input: pass a reference secret:<name>, never a value' };
      }
      return issue;
    });
  };
}
