import { isFlowError } from '../errors.js';

/**
 * The one table that maps FlowError codes to HTTP statuses for the REST launcher. Every code here is
 * documented in docs/rest.md; a FlowError with a code that is not listed is a 500 that keeps its code.
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<string, number>> = {
  invalid_json: 400,
  invalid_mode: 400,
  invalid_run_id: 400,
  invalid_request: 400,
  invalid_replay_mode: 400,
  unauthorized: 401,
  not_found: 404,
  flow_not_found: 404,
  run_not_found: 404,
  method_not_allowed: 405,
  // Replay could not reproduce the run: the journal, the FlowSpec or a step's output disagree.
  replay_divergence: 409,
  flow_digest_mismatch: 409,
  journal_sequence: 409,
  journal_chain_broken: 409,
  invalid_journal: 409,
  body_too_large: 413,
  invalid_inputs: 422,
  // A secret input's reference does not resolve (checked before the run is created: no run started).
  secret_not_found: 422,
  engine_disposed: 503,
};

/** Error body styles the engine's documents name: `{error, message}`, and `{code, message}` for replay. */
export type ErrorStyle = 'error' | 'code';

export interface HttpErrorInfo {
  status: number;
  code: string;
  message: string;
  data?: unknown;
}

/** Classify any thrown value. Non-FlowErrors are bugs: their text is not sent to the client. */
export function httpErrorInfo(err: unknown): HttpErrorInfo {
  if (isFlowError(err)) {
    return { status: HTTP_STATUS_BY_CODE[err.code] ?? 500, code: err.code, message: err.message, data: err.data };
  }
  return { status: 500, code: 'internal_error', message: '[flowctl] [launcher] internal error' };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return jsonTextResponse(status, JSON.stringify(body), headers);
}

/** A response whose body is JSON text serialised already (e.g. runJson). */
export function jsonTextResponse(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/**
 * The error response for `err`. `invalid_inputs` always carries its `issues` list; the replay route
 * answers `{code, message}` (plus `data`, the structured detail such as a divergence report).
 */
export function errorResponse(err: unknown, style: ErrorStyle = 'error', headers: Record<string, string> = {}): Response {
  const info = httpErrorInfo(err);
  const issues = issuesOf(info);
  let body: Record<string, unknown>;
  if (style === 'code') {
    body = { code: info.code, message: info.message };
    if (info.data !== undefined) body.data = info.data;
  } else {
    body = { error: info.code, message: info.message };
  }
  if (issues) body.issues = issues;
  return jsonResponse(info.status, body, headers);
}

function issuesOf(info: HttpErrorInfo): unknown[] | undefined {
  if (info.code !== 'invalid_inputs') return undefined;
  const data = info.data as { issues?: unknown } | unknown[] | undefined;
  if (Array.isArray(data)) return data;
  if (data && Array.isArray((data as { issues?: unknown }).issues)) return (data as { issues: unknown[] }).issues;
  return [];
}
