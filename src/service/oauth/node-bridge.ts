import type { IncomingMessage, ServerResponse } from 'node:http';
import { toFetchResponse, toReqRes } from 'fetch-to-node';

/**
 * oidc-provider is a Koa app: a node `(req, res)` callback. The service is web-standard (Request in,
 * Response out) on any host, so each OAuth request goes through fetch-to-node's node-compatible
 * request and response pair. Only what the pair needs is set here: the client's scheme as
 * X-Forwarded-Proto (the provider trusts it, `proxy = true`), from the public URL (the one the issuer
 * names), since a TLS proxy in front of the service ends TLS; and a stand-in socket.
 */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

export function forNode(request: Request, publicUrl: string): { req: IncomingMessage; res: ServerResponse; response: Promise<Response> } {
  const headers = new Headers(request.headers);
  headers.set('x-forwarded-proto', new URL(publicUrl).protocol.replace(':', ''));
  headers.set('x-forwarded-host', new URL(publicUrl).host);
  const body = request.method === 'GET' || request.method === 'HEAD' ? null : request.body;
  // Koa (type-is) sees a body only with Content-Length or Transfer-Encoding, which a Request made in
  // process (not read off a socket) may lack.
  if (body && !headers.has('content-length') && !headers.has('transfer-encoding')) headers.set('transfer-encoding', 'chunked');
  const forwarded = new Request(request.url, { method: request.method, headers, body, ...(body ? { duplex: 'half' } : {}) } as RequestInit);
  const { req, res } = toReqRes(forwarded);
  // fetch-to-node's request has no socket (null); Koa reads `socket.encrypted` for the scheme (the
  // proxy header above decides it) and `socket.remoteAddress` for the client's address.
  const socket = { encrypted: false, remoteAddress: undefined };
  Object.defineProperty(req, 'socket', { value: socket });
  Object.defineProperty(req, 'connection', { value: socket });
  return { req, res, response: toFetchResponse(res) };
}

/** Run a node handler on a web request; its response once the handler starts answering. */
export async function callNode(request: Request, publicUrl: string, handler: NodeHandler): Promise<Response> {
  const { req, res, response } = forNode(request, publicUrl);
  await handler(req, res);
  return response;
}
