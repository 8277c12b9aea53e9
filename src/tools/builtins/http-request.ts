import type { Agent } from 'undici';
import { FlowError, isFlowError } from '../../errors.js';
import { abortError, defineTool, toolError } from '../contract.js';
import type { EgressGuard } from '../egress.js';
import type { ToolContext } from '../types.js';

/**
 * `http/request`: one HTTP request with global fetch.
 *
 * - `query` entries are appended to the URL's query; `json` sends a JSON body (and
 *   `content-type: application/json` unless given); `body` sends text. Redirects are followed.
 * - Without `expect_status`, any status below 400 succeeds; with it, only the listed statuses do.
 * - The response body is parsed when its content-type is JSON (`application/json` or `*+json`),
 *   otherwise returned as text; it may not exceed `max_bytes` (default 10 MiB).
 * - Reports the effect `{kind: 'net', target: <host[:port]>}` before sending.
 * - Under a tool policy with an egress guard (`ctx.egress`), an IP-literal or metadata-name URL is
 *   refused before anything else (no effect), and every connection, redirects included, is made
 *   through an Agent that checks the address it connects to (docs/tools.md, "Policy").
 * Errors: `egress_denied` (not retryable), `http_bad_url`, `http_bad_request` (invalid headers), `http_timeout` (retryable),
 * `http_network` (refused, reset, DNS; retryable), `http_status` (retryable for 5xx, not for 4xx),
 * `http_bad_json`, `http_response_too_large`; an abort of `ctx.signal` throws its reason.
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const SCALAR = { type: ['string', 'number', 'boolean'] };

interface HttpInput {
  method?: (typeof METHODS)[number];
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | (string | number | boolean)[]>;
  json?: unknown;
  body?: string;
  timeout_ms?: number;
  expect_status?: number | number[];
  max_bytes?: number;
}

interface HttpOutput {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  url: string;
}

const NAME = 'http/request';
const err = (code: string, message: string, retryable: boolean, data?: Record<string, unknown>, cause?: unknown) =>
  toolError(code, `[flowctl] [${NAME}] ${message}`, { retryable, data, cause });

function buildUrl(input: HttpInput): URL {
  let url: URL;
  try {
    url = new URL(input.url);
  } catch (cause) {
    throw err('http_bad_url', `"${input.url}" is not an absolute URL`, false, { url: input.url }, cause);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw err('http_bad_url', `"${input.url}" is not http or https`, false, { url: input.url });
  }
  // fetch refuses them anyway, with a message that repeats the URL; a password there is often a secret.
  if (url.username !== '' || url.password !== '') {
    throw err(
      'http_bad_url',
      `a URL of ${url.origin} carries credentials before its host, which fetch does not send; pass them in an authorization header`,
      false,
    );
  }
  for (const [key, value] of Object.entries(input.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
  return url;
}

/**
 * The request headers. A header value may carry a secret, so an invalid one is reported by its
 * header name only: the platform's message names the offending character and its index (or quotes
 * the whole value), and neither may reach the journal. No cause is attached for the same reason.
 */
function buildHeaders(input: HttpInput): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    try {
      headers.append(name, value);
    } catch {
      let validName = true;
      try {
        new Headers([[name, 'x']]);
      } catch {
        validName = false;
      }
      throw err(
        'http_bad_request',
        validName
          ? `invalid headers: the value of header "${name}" is not a valid HTTP header value (only Latin-1 characters, no NUL, CR or LF); percent-encode or base64 it first`
          : `invalid headers: "${name}" is not a valid HTTP header name`,
        false,
        { header: name },
      );
    }
  }
  if (input.json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return headers;
}

// undici reports connection failures as TypeError('fetch failed') with the system error as cause.
function networkDetail(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

async function readBody(res: Response, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw err('http_response_too_large', `response body exceeds ${maxBytes} bytes`, false, { max_bytes: maxBytes });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

// Headers iterate set-cookie once per cookie; keep them all, joined like every other repeated header.
function headerObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of headers) out[key] = key in out ? `${out[key]}, ${value}` : value;
  return out;
}

function isJsonType(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function statusAccepted(status: number, expect: number | number[] | undefined): boolean {
  if (expect === undefined) return status < 400;
  return (Array.isArray(expect) ? expect : [expect]).includes(status);
}

/** The run's guarded Agent (one per run, closed with the run's scope). */
function guardedAgent(ctx: ToolContext, guard: EgressGuard): Promise<Agent> {
  return ctx.scope.get(
    'http/request:egress-agent',
    // undici loads only when a run has an egress guard (it costs about 0.1 s to load).
    async () => (await import('../egress-agent.js')).createGuardedAgent(guard),
    (agent) => agent.close(),
  );
}

async function request(input: HttpInput, ctx: ToolContext): Promise<HttpOutput> {
  const url = buildUrl(input);
  const headers = buildHeaders(input);
  const method = input.method ?? 'GET';
  if (ctx.signal.aborted) throw abortError(ctx.signal, NAME);
  // A literal address or a metadata name is refused here, before any effect or connection.
  ctx.egress?.precheck(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
  const agent = ctx.egress ? await guardedAgent(ctx, ctx.egress) : undefined;

  const timeout = new AbortController();
  const timer = input.timeout_ms === undefined ? undefined : setTimeout(() => timeout.abort(), input.timeout_ms);
  const signal = AbortSignal.any([ctx.signal, timeout.signal]);
  const classify = (e: unknown): FlowError => {
    if (ctx.signal.aborted) return abortError(ctx.signal, NAME);
    if (timeout.signal.aborted)
      return err('http_timeout', `${method} ${url.origin} timed out after ${input.timeout_ms} ms`, true, { timeout_ms: input.timeout_ms });
    if (e instanceof FlowError) return e;
    // The guard's refusal comes back as the cause of fetch's TypeError('fetch failed').
    const cause = (e as { cause?: unknown }).cause;
    if (isFlowError(cause, 'egress_denied')) return cause;
    return err('http_network', `${method} ${url.origin} failed: ${networkDetail(e)}`, true, { detail: networkDetail(e) }, e);
  };

  ctx.effect({ kind: 'net', target: url.host });
  try {
    let res: Response;
    try {
      const init = {
        method,
        body: input.json !== undefined ? JSON.stringify(input.json) : input.body,
        signal,
        redirect: 'follow' as const,
      };
      res = agent
        ? ((await (await import('undici')).fetch(url, { ...init, headers: [...headers], dispatcher: agent })) as unknown as Response)
        : await fetch(url, { ...init, headers });
    } catch (e) {
      throw classify(e);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBody(res, input.max_bytes ?? DEFAULT_MAX_BYTES, signal);
    } catch (e) {
      throw classify(e);
    }
    const text = new TextDecoder().decode(bytes);
    let body: unknown = text;
    if (isJsonType(res.headers.get('content-type')) && text !== '') {
      try {
        body = JSON.parse(text);
      } catch (cause) {
        throw err('http_bad_json', `${method} ${url.origin} answered invalid JSON`, false, { status: res.status }, cause);
      }
    }
    if (!statusAccepted(res.status, input.expect_status)) {
      throw err('http_status', `${method} ${url.origin}${url.pathname} answered ${res.status}`, res.status >= 500, {
        status: res.status,
        body,
      });
    }
    return { status: res.status, headers: headerObject(res.headers), body, url: res.url || url.href };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export const httpRequest = defineTool<HttpInput, HttpOutput>(
  {
    ref: 'http/request',
    version: '1.0.0',
    description: 'Send one HTTP request and return status, headers and body (parsed when JSON).',
    input_schema: {
      type: 'object',
      properties: {
        method: { enum: [...METHODS], default: 'GET' },
        url: { type: 'string', description: 'Absolute http or https URL.' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        query: { type: 'object', additionalProperties: { anyOf: [SCALAR, { type: 'array', items: SCALAR }] } },
        json: { description: 'A JSON body; sets content-type application/json unless given.' },
        body: { type: 'string', description: 'A text body.' },
        timeout_ms: { type: 'integer', minimum: 1, description: 'Request deadline, body included. Default: the step timeout only.' },
        expect_status: {
          anyOf: [{ type: 'integer' }, { type: 'array', items: { type: 'integer' }, minItems: 1 }],
          description: 'Accepted statuses. Default: any status below 400.',
        },
        max_bytes: { type: 'integer', minimum: 0, description: 'Largest accepted response body. Default 10485760.' },
      },
      required: ['url'],
      not: { required: ['json', 'body'] },
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        status: { type: 'integer' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { description: 'Parsed JSON when the content-type is JSON, else text.' },
        url: { type: 'string', description: 'The final URL after redirects.' },
      },
      required: ['status', 'headers', 'body', 'url'],
      additionalProperties: false,
    },
    // `secrets`: a request may carry a resolved secret (an API key in a header, a token in the body).
    // The compiler grants it to a step only when that step's args reference a secret input.
    capabilities: ['net', 'secrets'],
  },
  request,
);
