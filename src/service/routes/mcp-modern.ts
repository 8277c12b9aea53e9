import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, ProtocolError, Server, type McpHttpHandler, type PerRequestResponseMode } from '@modelcontextprotocol/server';
import packageJson from '../../../package.json' with { type: 'json' };
import type { ApiKeyRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import type { mcpTools } from './mcp-tools.js';

/**
 * The hosted MCP endpoint's protocol revision 2026-07-28 (docs/mcp.md, "Revisions"): stateless by
 * design (no `initialize`; `server/discover` and a per-request `_meta` envelope), served by the
 * official v2 server package (`@modelcontextprotocol/server`, `createMcpHandler` with `legacy:
 * 'reject'`). routes/mcp.ts routes a request here when the v2 package's own classifier
 * (`isLegacyRequest`) says it is not 2025-era traffic; 2025-11-25 and older stay on the 1.x SDK
 * transport, whose JSON response mode the Accept-order rule needs (the v2 package's stateless legacy
 * fallback always streams). Both eras run the same tools (mcp-tools.ts: `callTool`, the tool list,
 * the MCP Apps resources), so they cannot drift apart.
 */

/** The revision this module serves. */
export const MODERN_REVISION = '2026-07-28';

type Tools = ReturnType<typeof mcpTools>;

/** The key a request was authenticated with, passed to the v2 handler as its pass-through authInfo. */
interface KeyAuth {
  key: ApiKeyRecord;
}

/** A 1.x SDK McpError (unknown tool, unknown resource) as the v2 package's ProtocolError, without the 1.x message prefix. */
function v2Error(err: unknown): unknown {
  if (err instanceof McpError) return new ProtocolError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  return err;
}

export function modernMcp(deps: ServiceDeps, tools: Tools) {
  const factory = (mode: PerRequestResponseMode) => (ctx: { authInfo?: { extra?: Record<string, unknown> } }) => {
    const key = (ctx.authInfo?.extra as KeyAuth | undefined)?.key;
    if (!key) throw new Error('mcp-modern: a request reached the v2 handler without its key');
    const server = new Server(
      { name: 'flowctl-hosted', version: packageJson.version },
      { capabilities: { tools: {}, resources: {} }, instructions: tools.instructions },
    );
    server.setRequestHandler('tools/list', () => tools.internal(async () => JSON.parse(await tools.toolsListJson(key))));
    server.setRequestHandler('resources/list', () => tools.listResources());
    server.setRequestHandler('resources/read', async (request) => {
      try {
        return tools.readResource(request.params.uri);
      } catch (err) {
        throw v2Error(err);
      }
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      try {
        return (await tools.internal(() =>
          tools.callTool(
            key,
            { name: request.params.name, arguments: request.params.arguments, progressToken: request.params._meta?.progressToken },
            {
              // A JSON-only response drops notifications: progress is sent only where it can arrive.
              ...(mode !== 'json' ? { notify: (params) => ctx.mcpReq.notify({ method: 'notifications/progress', params }) } : {}),
              // A client that closes the connection cancels the call (the revision's cancellation).
              hangup: ctx.mcpReq.signal,
            },
          ),
        )) as never;
      } catch (err) {
        throw v2Error(err);
      }
    });
    return server;
  };

  const onerror = (err: Error) => deps.logger.warn(`[flowctl] [service] mcp (${MODERN_REVISION}): ${err.message}`);
  // One v2 handler per response mode, made when first needed.
  const handlers = new Map<PerRequestResponseMode, McpHttpHandler>();
  const handlerFor = (mode: PerRequestResponseMode): McpHttpHandler => {
    let handler = handlers.get(mode);
    if (!handler) {
      handler = createMcpHandler(factory(mode), { legacy: 'reject', responseMode: mode, onerror, maxRequestBodySize: deps.settings.maxBodyBytes });
      handlers.set(mode, handler);
    }
    return handler;
  };

  /**
   * Serve one 2026-07-28 request. The response mode follows Accept as on the older revisions:
   * `text/event-stream` listed first streams, `application/json` alone never streams, and both with
   * JSON first answer one JSON body unless the call sends progress (the v2 `auto` mode).
   */
  return (request: Request, parsed: unknown, key: ApiKeyRecord, accept: { sseFirst: boolean; sse: boolean }): Promise<Response> => {
    const mode: PerRequestResponseMode = accept.sseFirst ? 'sse' : accept.sse ? 'auto' : 'json';
    const authInfo = { token: '', clientId: key.id, scopes: [], extra: { key } satisfies KeyAuth };
    return handlerFor(mode).fetch(request, { authInfo, ...(parsed !== undefined ? { parsedBody: parsed } : {}) });
  };
}
