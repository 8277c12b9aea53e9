/**
 * The hosted API as the web app uses it (docs/hosted-api.md): same origin, the `svc_session` cookie
 * (HttpOnly: the browser attaches it), JSON bodies. Cookie-authenticated writes carry the page's
 * Origin, which the service checks against SVC_ORIGINS. Every error is an ApiError with the
 * service's structured body.
 */

export interface Issue {
  path: (string | number)[];
  message: string;
  code: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Listeners told when the session is gone (a 401 `unauthenticated` on any call). */
const unauthenticated = new Set<() => void>();
export function onUnauthenticated(fn: () => void): () => void {
  unauthenticated.add(fn);
  return () => unauthenticated.delete(fn);
}

export async function api<T = unknown>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, 'network_error', `The service could not be reached (${(err as Error).message}).`);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    if (!res.ok) throw new ApiError(res.status, 'http_error', `HTTP ${res.status}: ${text.slice(0, 200)}`);
    throw new ApiError(res.status, 'invalid_response', 'The service answered something that is not JSON.');
  }
  if (!res.ok) {
    const code = typeof parsed?.error === 'string' ? parsed.error : 'http_error';
    const message = typeof parsed?.message === 'string' ? parsed.message : code === 'invalid_request' ? 'The request was not valid.' : `HTTP ${res.status}`;
    const err = new ApiError(res.status, code, message, Array.isArray(parsed?.issues) ? parsed.issues : [], parsed);
    if (res.status === 401 && code === 'unauthenticated' && !opts.quiet401) for (const fn of unauthenticated) fn();
    throw err;
  }
  return parsed as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const put = <T>(path: string, body: unknown) => api<T>('PUT', path, body);
export const del = (path: string) => api<void>('DELETE', path);

/** A run artifact (a step screenshot) by its digest: GET /api/executions/{id}/artifacts/{digest}. */
export const artifactUrl = (execution: string, digest: string) => `/api/executions/${encodeURIComponent(execution)}/artifacts/${encodeURIComponent(digest)}`;

/** The app path of a rerecord_href (an absolute URL on the service's public origin): the studio at the drifted step. */
export function rerecordPath(href: string): string {
  const u = new URL(href, window.location.origin);
  return `${u.pathname}${u.search}`;
}

export const q = (params: Record<string, string | number | undefined | null>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : '';
};

// Resources (docs/hosted-api.md).

export type Role = 'owner' | 'member';
export interface User {
  id: string;
  email: string;
}
export interface Org {
  id: string;
  name: string;
}
export interface Session {
  user: User;
  org: Org;
  role: Role;
  orgs: { id: string; name: string; role: Role }[];
}

export type AutomationStatus = 'draft' | 'published' | 'failing';
export interface Automation {
  id: string;
  org_id: string;
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: string;
  live_digest: string | null;
  calls_7d: number;
  last_run_at: string | null;
  needs_attention: boolean;
  rerecord_href: string | null;
  status: AutomationStatus;
}

export interface Version {
  flow_digest: string;
  created_at: string;
  created_by: string;
}

export interface AuthoringSession {
  id: string;
  automation_id: string;
  captured_ops: unknown[];
  input_slots: string[];
  input_params: { name: string; required: boolean; sample: string }[];
  secret_slots: string[];
  updated_at: string;
  error: string | null;
  state: 'editing' | 'published';
  files: { name: string; digest: string; size: number }[];
  secret_names: Record<string, string>;
}

export interface Schedule {
  id: string;
  flow: string;
  cron: string;
  timezone: string | null;
  flow_digest: string;
  inputs: Record<string, unknown>;
  enabled: boolean;
  at: string;
  updated_at: string;
  next_fire_at: string | null;
}

export interface Execution {
  id: string;
  run_id: string;
  automation_id: string;
  flow: string;
  flow_digest: string;
  dispatch: 'sync' | 'queue' | 'mcp' | 'schedule';
  status: string;
  created_at: string;
  finished_at: string | null;
  error_code: string | null;
}

export interface StepError {
  code: string;
  message: string;
  retryable?: boolean;
}
export interface StepWarning {
  code: string;
  message: string;
  data?: unknown;
}
export interface JournalEntry {
  event: 'run_started' | 'step_started' | 'step_succeeded' | 'step_failed' | 'step_skipped' | 'effect_recorded' | 'run_finished';
  at: string;
  seq: number;
  flow_digest: string;
  inputs_digest: string;
  digest: string;
  prev: string | null;
  step?: string;
  attempt?: number;
  tool?: { ref: string; version: string };
  input?: unknown;
  output?: unknown;
  warnings?: StepWarning[];
  artifacts?: string[];
  duration_ms?: number;
  error?: StepError & { step?: string };
  will_retry?: boolean;
  reason?: string;
  effect?: { kind: string; target: string; idempotency_key: string };
  status?: 'succeeded' | 'failed' | 'canceled';
  flow_name?: string;
  inputs?: Record<string, unknown>;
  provider?: string;
}
export interface Run {
  id: string;
  flow_digest: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled';
  started_at: string;
  finished_at?: string;
  output?: unknown;
  journal: JournalEntry[];
}

export interface ApiKey {
  id: string;
  name: string;
  mode: 'live' | 'test';
  prefix: string;
  last4: string;
  automations: string[] | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface SecretMeta {
  name: string;
  updated_at: string;
}
export interface Member {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}
export interface AuditEntry {
  id: string;
  org_id: string;
  actor: string;
  target: string;
  at: string;
  metadata: Record<string, unknown> & { action?: string };
}

/** The FlowSpec as far as the app reads it (docs/flows.md). */
export interface FlowSpecLike {
  name?: string;
  description?: string;
  inputs?: Record<string, { type?: string; secret?: boolean; default?: unknown; description?: string } & Record<string, unknown>>;
  steps?: { id: string; tool?: { ref: string; version: string }; timeout_ms?: number }[];
  [k: string]: unknown;
}
