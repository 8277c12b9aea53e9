import { z } from '@hono/zod-openapi';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { isFlowError } from '../../errors.js';
import { jsonDeeperThan, readBodyText } from '../../http/body.js';
import type { ServiceDeps } from '../context.js';
import { MAX_BODY_DEPTH, nulIssues } from '../request-guards.js';
import { defineRoute, type ServiceRoute } from '../route-table.js';
import { MODERN_REVISION, modernMcp } from './mcp-modern.js';
import { mcpTools } from './mcp-tools.js';

/**
 * The hosted MCP endpoint (spec "Hosted MCP endpoint"; docs/mcp.md, "Hosted"): stateless Streamable
 * HTTP, a new SDK server and web-standard transport per request. One tool per automation of the key's
 * org that is published, MCP-enabled and within the key's scope; the response mode follows the order
 * of the media types in Accept. This file is the HTTP and JSON-RPC side (Origin, body, test-key rule,
 * the fast tools/list, the transport); the tools themselves are in mcp-tools.ts.
 */

/** Whether `text/event-stream` is listed before `application/json` (or alone) in an Accept header. */
export function sseFirst(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((p) => p.split(';')[0]!.trim().toLowerCase());
  const sse = types.indexOf('text/event-stream');
  const json = types.indexOf('application/json');
  return sse >= 0 && (json < 0 || sse < json);
}

/** The first protocol revision without JSON-RPC batching (it was removed in 2025-06-18). */
const NO_BATCHES_SINCE = '2025-06-18';

/**
 * The protocol revision a batch (a JSON array body) is sent under, when it is one this endpoint knows:
 * the `MCP-Protocol-Version` header; else, for a batch holding `initialize`, the revision that request
 * negotiates (the one it asks for when supported, else the newest); else 2025-03-26, which the
 * Streamable HTTP transport says a server assumes when the header is absent. An unsupported header is
 * left to the SDK transport, which refuses it. (The SDK's transport answers batches whatever the
 * revision, so the rule is kept here.)
 */
export function batchRevision(header: string | undefined, batch: unknown[]): string | undefined {
  if (header !== undefined) return SUPPORTED_PROTOCOL_VERSIONS.includes(header) || header === MODERN_REVISION ? header : undefined;
  const init = batch.find((m): m is { method: 'initialize'; params?: { protocolVersion?: unknown } } => (m as { method?: unknown })?.method === 'initialize');
  if (init) {
    const asked = init.params?.protocolVersion;
    return typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
  }
  return '2025-03-26';
}

/**
 * Whether a request claims revision 2026-07-28 or later: the `MCP-Protocol-Version` header names a
 * revision the 1.x SDK does not know, or a message carries the per-request `_meta` envelope's
 * protocol version. Anything else (the 2025-era handshake and requests, and junk that claims
 * nothing) stays on the 1.x transport, which answers junk as it always has.
 */
export function claimsModernRevision(header: string | undefined, parsed: unknown): boolean {
  if (header !== undefined && header >= MODERN_REVISION) return true;
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: unknown } } | null)?.params?._meta;
    return meta !== null && typeof meta === 'object' && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY);
  });
}

const jsonRpcError = (id: unknown, code: number, message: string, data?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data !== undefined ? { data } : {}) } });

export function mcpRoutes(deps: ServiceDeps): ServiceRoute[] {
  const tools = mcpTools(deps);
  const { toolsListJson, visibleByName, shapeOf, buildServer } = tools;
  const modern = modernMcp(deps, tools);

  return [
    defineRoute(
      {
        method: 'post',
        path: '/mcp',
        auth: 'bearer',
        summary: 'The hosted MCP endpoint: stateless Streamable HTTP, one tool per published automation the key may run',
        tags: ['mcp'],
        responses: {
          200: {
            description: 'A JSON-RPC response (application/json), or an SSE stream when text/event-stream is listed before application/json',
            content: { 'application/json': { schema: z.unknown() } },
          },
          403: {
            description:
              '`test_key_forbidden`: a svc_test_ key calling a tool with a secret input; `forbidden`: an Origin not on SVC_ORIGINS (JSON-RPC error, data.error)',
          },
        },
      },
      async (c) => {
        const { record: key } = c.get('key');
        const raw = c.req.raw;
        // MCP's DNS-rebinding rule (Streamable HTTP transport): a request that carries an Origin not on
        // the service's allowlist (SVC_ORIGINS, default the public URL's origin) is refused with 403.
        const origin = c.req.header('origin');
        if (origin !== undefined && !deps.settings.origins.includes(origin.replace(/\/+$/, ''))) {
          return c.body(
            jsonRpcError(null, -32000, `forbidden: requests from origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (SVC_ORIGINS)`, {
              error: 'forbidden',
            }),
            403,
            { 'content-type': 'application/json' },
          );
        }
        const streamFirst = sseFirst(c.req.header('accept'));
        // Parse the body once: the test-key rule is answered at the HTTP level (403), and the transport
        // gets the parsed message. A body that is not JSON is left to the transport (JSON-RPC parse error).
        let parsed: unknown;
        let text: string | undefined;
        try {
          text = await readBodyText(raw, deps.settings.maxBodyBytes);
          if (jsonDeeperThan(text, MAX_BODY_DEPTH)) {
            return c.body(jsonRpcError(null, -32600, `the request nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`), 400, {
              'content-type': 'application/json',
            });
          }
          parsed = JSON.parse(text);
        } catch (err) {
          if (isFlowError(err, 'body_too_large'))
            return c.body(jsonRpcError(null, -32600, 'the request body is larger than 1 MiB'), 413, { 'content-type': 'application/json' });
          parsed = undefined;
        }
        // JSON-RPC batches left MCP in 2025-06-18: a batch sent under that revision or a later one is an
        // invalid request (400, -32600); an older revision keeps them.
        if (Array.isArray(parsed)) {
          const revision = batchRevision(c.req.header('mcp-protocol-version'), parsed);
          if (revision !== undefined && revision >= NO_BATCHES_SINCE) {
            return c.body(
              jsonRpcError(
                null,
                -32600,
                `Invalid Request: JSON-RPC batches are not part of MCP protocol revision ${revision} (they were removed in ${NO_BATCHES_SINCE}); send one message per request`,
              ),
              400,
              { 'content-type': 'application/json' },
            );
          }
        }
        // Postgres stores no NUL: a string with one would fail the lookup or run it names (request-guards.ts).
        const nul = nulIssues(parsed);
        if (nul.length > 0) {
          const id = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { id?: unknown }).id : null;
          return c.body(
            jsonRpcError(
              typeof id === 'string' || typeof id === 'number' ? id : null,
              -32602,
              `invalid params: ${nul.map((i) => i.path.join('.') || '(message)').join(', ')} must not contain the NUL character (U+0000)`,
            ),
            400,
            {
              'content-type': 'application/json',
            },
          );
        }
        const messages = Array.isArray(parsed) ? parsed : parsed === undefined ? [] : [parsed];
        for (const m of messages as { method?: string; id?: unknown; params?: { name?: string } }[]) {
          if (m?.method !== 'tools/call' || key.mode !== 'test' || typeof m.params?.name !== 'string') continue;
          const found = await visibleByName(key, m.params.name);
          if (found && shapeOf(found.digest, found.spec).secretInputs.length > 0) {
            return c.body(
              jsonRpcError(m.id, -32001, 'test_key_forbidden: this automation uses production credentials (a secret input); call it with a svc_live_ key', {
                error: 'test_key_forbidden',
              }),
              403,
              { 'content-type': 'application/json' },
            );
          }
        }
        // Revision 2026-07-28 (a `_meta` envelope, `server/discover`): the v2 server package, after the
        // same rules as above (mcp-modern.ts), for a request that claims it and that the v2 package's
        // own classifier does not take for 2025-era traffic.
        const headers = new Headers(raw.headers);
        headers.set('accept', 'application/json, text/event-stream');
        const request = new Request(raw.url, { method: 'POST', headers, body: text ?? '' });
        if (
          claimsModernRevision(c.req.header('mcp-protocol-version'), parsed) &&
          !(await isLegacyRequest(request, parsed, { maxRequestBodySize: deps.settings.maxBodyBytes }))
        ) {
          // The request's abort signal rides along: a client that hangs up cancels its call.
          const modernRequest = new Request(raw.url, { method: 'POST', headers, body: text ?? '', signal: raw.signal });
          const sse = /(^|,)\s*text\/event-stream\b/i.test(c.req.header('accept') ?? '');
          return modern(modernRequest, parsed, key, { sseFirst: streamFirst, sse });
        }
        // A lone JSON-mode tools/list (the common poll of every agent) is answered from the serialized
        // list; the SDK transport would answer it the same way (one JSON-RPC response, 200,
        // application/json). Anything else, or a request the transport must refuse (an unsupported
        // protocol version, a body that is not application/json), goes through the SDK.
        const list = parsed as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: Record<string, unknown> } | undefined;
        const version = c.req.header('mcp-protocol-version');
        if (
          !streamFirst &&
          list !== undefined &&
          list !== null &&
          !Array.isArray(list) &&
          list.jsonrpc === '2.0' &&
          list.method === 'tools/list' &&
          (typeof list.id === 'string' || (typeof list.id === 'number' && Number.isInteger(list.id))) &&
          (list.params === undefined || (typeof list.params === 'object' && list.params !== null && Object.keys(list.params).every((k) => k === '_meta'))) &&
          (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) &&
          /^application\/json\b/i.test(c.req.header('content-type') ?? '')
        ) {
          const body = `{"result":${await toolsListJson(key)},"jsonrpc":"2.0","id":${JSON.stringify(list.id)}}`;
          return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
        }
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streamFirst });
        const server = buildServer(key, streamFirst, streamFirst ? raw.signal : undefined);
        await server.connect(transport);
        // The SDK wants both media types listed whatever their order (set above); the order was read above.
        const response = await transport.handleRequest(request, parsed === undefined ? {} : { parsedBody: parsed });
        if (!streamFirst) {
          await transport.close().catch(() => undefined);
          await server.close().catch(() => undefined);
        }
        return response;
      },
    ),
  ];
}
