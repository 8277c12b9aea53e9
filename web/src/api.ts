import type { z } from 'zod';
import type { JournalEntrySchema, RunSchema } from '../../src/run/run-schema';
import type { Session as AuthoringSessionSchema } from '../../src/service/routes/authoring';
import type { SessionBody as SessionSchema } from '../../src/service/routes/auth';
import type { Automation as AutomationSchema, Version as VersionSchema } from '../../src/service/routes/automations';
import type { Execution as ExecutionSchema } from '../../src/service/routes/executions';
import type { OAuthGrant as OAuthGrantSchema } from '../../src/service/routes/oauth';
import type { RunResult as RunResultSchema } from '../../src/service/routes/gateway';
import type { Schedule as ScheduleSchema } from '../../src/service/routes/schedules';
import type { SecretMeta as SecretMetaSchema } from '../../src/service/routes/secrets';
import type {
  ApiKey as ApiKeySchema,
  AuditEntry as AuditEntrySchema,
  Member as MemberSchema,
  Org as OrgSchema,
  RoleEnum,
  User as UserSchema,
} from '../../src/service/schemas';

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

// Resources (docs/hosted-api.md): the service's own response schemas, as types (type-only imports:
// nothing of the service is bundled), so the app cannot drift from the API.

export type Role = z.infer<typeof RoleEnum>;
export type User = z.infer<typeof UserSchema>;
export type Org = z.infer<typeof OrgSchema>;
/** GET /api/auth/session. */
export type Session = z.infer<typeof SessionSchema>;

export type Automation = z.infer<typeof AutomationSchema>;
export type OAuthGrant = z.infer<typeof OAuthGrantSchema>;
export type AutomationStatus = Automation['status'];
export type Version = z.infer<typeof VersionSchema>;
export type AuthoringSession = z.infer<typeof AuthoringSessionSchema>;
export type Schedule = z.infer<typeof ScheduleSchema>;
export type Execution = z.infer<typeof ExecutionSchema>;
/** A synchronous run's answer (the gateway's, and POST /api/authoring/{id}/test). */
export type RunResult = z.infer<typeof RunResultSchema>;

/** The engine's Run (spec/engine.md), as GET /api/executions/{id} returns it. */
export type Run = z.infer<typeof RunSchema>;
type Entry = z.infer<typeof JournalEntrySchema>;
type KeysOfAny<T> = T extends unknown ? keyof T : never;
type ValueInAny<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
/**
 * A journal entry as the run page reads it: the fields every kind has, and any other kind's field,
 * optional (absent on the kinds without it), so the page reads `entry.step` without narrowing first.
 */
export type JournalEntry = { [K in keyof Entry]: Entry[K] } & { [K in Exclude<KeysOfAny<Entry>, 'error' | keyof Entry>]?: ValueInAny<Entry, K> } & {
  /** A step_failed's error, or a run_finished's (which names its step). */
  error?: StepError;
};
/** The error of a failed run: a step's error and the step it failed at. */
export type StepError = NonNullable<Extract<Entry, { event: 'run_finished' }>['error']>;
export type StepWarning = NonNullable<JournalEntry['warnings']>[number];

export type ApiKey = z.infer<typeof ApiKeySchema>;
export type SecretMeta = z.infer<typeof SecretMetaSchema>;
export type Member = z.infer<typeof MemberSchema>;
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** The FlowSpec as far as the app reads it (docs/flows.md). */
export interface FlowSpecLike {
  name?: string;
  description?: string;
  inputs?: Record<string, { type?: string; secret?: boolean; default?: unknown; description?: string } & Record<string, unknown>>;
  steps?: { id: string; tool?: { ref: string; version: string }; timeout_ms?: number }[];
  [k: string]: unknown;
}
