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
  // The request body stopped before its end (the client went away, or its body stalled).
  body_incomplete: 400,
  // Answered by the node-http and express adapters for requests the router never sees: Node's
  // parser or the URL builder refused them (a backslash or raw byte in the path, a bad method or Host).
  bad_request: 400,
  unauthorized: 401,
  // Token-less launcher: a Host that is not loopback (or allowed), a write from another site's Origin.
  host_not_allowed: 403,
  origin_not_allowed: 403,
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
  // The node-http adapter's idle close of a request whose headers or body stopped arriving.
  request_timeout: 408,
  body_too_large: 413,
  // A body that is not application/json (UTF-8), or a coding the launcher does not decode.
  unsupported_media_type: 415,
  unsupported_encoding: 415,
  invalid_inputs: 422,
  // Request headers over Node's limit (16 KiB by default), answered by the node-http adapter.
  headers_too_large: 431,
  // A secret input's reference does not resolve (checked before the run is created: no run started).
  secret_not_found: 422,
  engine_disposed: 503,
  // The store cannot be reached right now (a database restart, failover, network): retry shortly.
  db_unreachable: 503,
};

/** Seconds a client is told to wait (`Retry-After`) on 503 `db_unreachable`: a database restart takes a few. */
export const DB_UNREACHABLE_RETRY_AFTER_SECONDS = 2;

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
  if (isFlowError(err, 'db_unreachable')) {
    // The store's message names the database's host, port, database and user: logged, never sent.
    return {
      status: HTTP_STATUS_BY_CODE.db_unreachable!,
      code: err.code,
      message: '[flowctl] [launcher] the run store cannot be reached right now: retry shortly',
    };
  }
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
  if (info.code === 'db_unreachable') headers = { 'retry-after': String(DB_UNREACHABLE_RETRY_AFTER_SECONDS), ...headers };
  return jsonResponse(info.status, body, headers);
}

function issuesOf(info: HttpErrorInfo): unknown[] | undefined {
  if (info.code !== 'invalid_inputs') return undefined;
  const data = info.data as { issues?: unknown } | unknown[] | undefined;
  if (Array.isArray(data)) return data;
  if (data && Array.isArray((data as { issues?: unknown }).issues)) return (data as { issues: unknown[] }).issues;
  return [];
}

/**
 * The `errorHandler` of @hono/node-server's request listener (adapters/node-http, adapters/express):
 * a request Node parsed but no web Request can be built from (its RequestError: a backslash or raw
 * byte in the path, a missing or malformed Host) is a structured 400 `bad_request`, never an empty
 * one; anything else thrown by the handler is a 500 `internal_error` without its text.
 */
export function requestErrorResponse(err: unknown): Response {
  if (err instanceof Error && err.name === 'RequestError') {
    return jsonResponse(
      400,
      { error: 'bad_request', message: `[flowctl] the request could not be read: ${err.message.slice(0, 120)}` },
      { connection: 'close' },
    );
  }
  return jsonResponse(500, { error: 'internal_error', message: '[flowctl] internal error' });
}
