import { FlowError, isFlowError } from '../errors.js';
import { isConnectionError } from '../util/connection-errors.js';

/**
 * Errors of the hosted service (docs/hosted-api.md, "Status codes and error bodies"). One table maps
 * every code to its status; bodies are `{error, message}`, or `{error, issues}` for validation.
 * Anything that is not a FlowError is a bug: answered 500 `internal_error` without its text.
 */
export const SERVICE_STATUS_BY_CODE: Readonly<Record<string, number>> = {
  invalid_json: 400,
  invalid_credentials: 401,
  unauthenticated: 401,
  invalid_key: 401,
  forbidden: 403,
  test_key_forbidden: 403,
  not_found: 404,
  user_not_found: 404,
  method_not_allowed: 405,
  name_taken: 409,
  last_owner: 409,
  not_editable: 409,
  conflict: 409,
  body_too_large: 413,
  unsupported_media_type: 415,
  upgrade_required: 426,
  invalid_request: 422,
  secret_leak: 422,
  secret_not_found: 422,
  rate_limited: 429,
  not_ready: 503,
  queue_unavailable: 503,
  unavailable: 503,
};

/**
 * Seconds a client is told to wait (`Retry-After`) on 503 `unavailable` and `queue_unavailable`: a
 * database restart or failover takes a few seconds, and the pool reconnects on the next request.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * Whether `err` means the database cannot be reached right now (docs/deploy.md, "Database
 * outage"): the storage's `db_unreachable`, or a connection error (refused, reset, `57P01`
 * admin_shutdown, `57P03` starting up, "Connection terminated") anywhere in its `cause` chain, as
 * stores that wrap driver errors leave them. Such an error is answered 503 `unavailable`, never 500.
 */
export function isUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth++) {
    if (isFlowError(e, 'db_unreachable') || isConnectionError(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export function serviceError(code: keyof typeof SERVICE_STATUS_BY_CODE, message: string, data?: unknown): FlowError {
  return new FlowError(code, message, data === undefined ? {} : { data });
}

export interface Issue {
  path: (string | number)[];
  message: string;
  code: string;
}

export function invalidRequest(issues: Issue[]): FlowError {
  return new FlowError('invalid_request', "the request does not match the route's schema", { data: { issues } });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

/** Status and body for any thrown value. */
export function serviceErrorBody(err: unknown): { status: number; body: Record<string, unknown> } {
  if (isFlowError(err)) {
    const status = SERVICE_STATUS_BY_CODE[err.code];
    if (status !== undefined) {
      const data = err.data as { issues?: Issue[] } | undefined;
      if (err.code === 'invalid_request') return { status, body: { error: err.code, issues: data?.issues ?? [] } };
      return { status, body: { error: err.code, message: stripPrefix(err.message) } };
    }
  }
  if (isUnavailable(err)) {
    return {
      status: 503,
      body: { error: 'unavailable', message: `the database is unreachable for the moment; try again in ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds` },
    };
  }
  return { status: 500, body: { error: 'internal_error', message: 'internal error' } };
}

/** Headers that go with an error answer: `Retry-After` on the 503s a client should retry. */
export function serviceErrorHeaders(status: number, body: Record<string, unknown>): Record<string, string> {
  return status === 503 && (body.error === 'unavailable' || body.error === 'queue_unavailable')
    ? { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }
    : {};
}

/** The response for any thrown value. */
export function serviceErrorResponse(err: unknown, headers: Record<string, string> = {}): Response {
  const { status, body } = serviceErrorBody(err);
  return json(status, body, { ...serviceErrorHeaders(status, body), ...headers });
}

/** Messages from the core carry `[flowctl] [component]`; the hosted API answers plain sentences. */
function stripPrefix(message: string): string {
  return message.replace(/^(\[[^\]]+\]\s*)+/, '');
}
