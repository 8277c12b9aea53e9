import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { requestErrorResponse } from '../../src/http/errors.js';
import type { WebSocketAccept, WebSocketAcceptor } from '../../src/http/websocket.js';

/**
 * node:http's side of the WebSocket contract (src/http/websocket.ts): an 'upgrade' request goes to
 * the handler's `fetch` like any request, with an acceptor in its env. When the route accepted, the
 * connection is upgraded (ws's handleUpgrade, with the route's maxPayload); otherwise the route's
 * response (a 401, 403, 404, 429...) is the upgrade's answer, status, headers and body.
 *
 * Why not @hono/node-server's own WebSocket support (or @hono/node-ws): both answer a refused upgrade
 * with its status and an empty body (`Content-Length: 0`), dropping the `{error, message}` every
 * refusal carries; both upgrade through one WebSocketServer, so one maxPayload for every route; and
 * both are wired through their own `serve()`, not a request listener on a server we configure.
 */

/** The handler `injectWebSocket` hands upgrade requests to. */
export interface UpgradeHandler {
  fetch(request: Request, env: { incoming: IncomingMessage; webSocket: WebSocketAcceptor }): Response | Promise<Response>;
}

export interface WebSocketHost {
  /** End every upgraded connection (the server's close() does not: they left its bookkeeping). */
  closeAll(): void;
}

/** Response headers that describe the connection, not the answer: the socket's own are written. */
const HOP_HEADERS = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding', 'upgrade']);

/**
 * Write `response` as the answer to an upgrade request, then close the connection. By hand because
 * Node gives an 'upgrade' event a socket and no ServerResponse (ws's own refusals are written the same way).
 */
async function answerUpgrade(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
  if (socket.destroyed) return;
  const head = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
  for (const [name, value] of response.headers) {
    if (HOP_HEADERS.has(name) || name === 'set-cookie') continue;
    head.push(`${name}: ${value}`);
  }
  for (const cookie of response.headers.getSetCookie()) head.push(`set-cookie: ${cookie}`);
  head.push(`content-length: ${body.byteLength}`, 'connection: close');
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]), () => socket.destroy());
}

/** The web Request of an upgrade request (a GET without a body). */
function upgradeRequest(req: IncomingMessage): Request {
  const protocol = (req.socket as Socket & { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const url = new URL(req.url ?? '/', `${protocol}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return new Request(url, { method: req.method ?? 'GET', headers });
}

/**
 * Serve the handler's WebSocket routes on `server`: serveNodeHttp does it with `webSocket: true`;
 * a host that builds its own node:http server (express, hono) calls it with the same handler it
 * serves requests with. Without it Node hands upgrade requests to the request listener, whose routes
 * then find no acceptor (the hosted service answers them 426 `upgrade_required`).
 */
export function injectWebSocket(server: Server, handler: UpgradeHandler): WebSocketHost {
  const upgraded = new Set<Duplex>();
  // One ws server per message size limit (the studio's 64 KiB, the run live view's 4 KiB).
  const servers = new Map<number, WebSocketServer>();
  const wssFor = (maxPayload: number) => {
    let wss = servers.get(maxPayload);
    if (!wss) servers.set(maxPayload, (wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false })));
    return wss;
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer, spec: WebSocketAccept<never>) => {
    let settled = false;
    // Until open, a socket that closes (the client went away, or ws answered a malformed handshake
    // 400 itself, without calling back) did not upgrade.
    const abort = () => {
      if (settled) return;
      settled = true;
      spec.abort();
    };
    socket.once('close', abort);
    if (socket.destroyed) return abort();
    wssFor(spec.maxPayload).handleUpgrade(req, socket, head, (ws) => {
      socket.off('close', abort);
      if (settled) return ws.terminate();
      settled = true;
      // The route's socket type is ws's WebSocket (src/http/websocket.ts, WebSocketAccept).
      spec.open(ws as never);
    });
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    // The idle rule of the server's connections is not a WebSocket's: the routes keep their sockets alive.
    (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
    let accepted: WebSocketAccept<never> | undefined;
    const webSocket: WebSocketAcceptor = {
      accept(spec) {
        accepted = spec;
        return new Response(null, { status: 200 });
      },
    };
    const respond = async (): Promise<Response> => {
      let request: Request;
      try {
        request = upgradeRequest(req);
      } catch (err) {
        // A request no URL can be built from is a 400 `bad_request`, as on the request listener.
        return requestErrorResponse(Object.assign(new Error((err as Error).message), { name: 'RequestError' }));
      }
      // A handler that throws is a 500 `internal_error`, as on the request listener.
      return await Promise.resolve(handler.fetch(request, { incoming: req, webSocket })).catch(requestErrorResponse);
    };
    void respond()
      .then((response) => {
        // Accepted, unless a later layer answered something else.
        if (accepted && response.status === 200) return upgrade(req, socket, head, accepted);
        accepted?.abort();
        return answerUpgrade(socket, response);
      })
      .catch(() => socket.destroy());
  });

  return {
    closeAll() {
      for (const socket of upgraded) socket.destroy();
    },
  };
}
