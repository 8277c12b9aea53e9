import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { requestErrorResponse } from '../../src/http/errors.js';
import type { WebSocketAcceptor } from '../../src/http/websocket.js';
import { injectWebSocket } from './websocket.js';

export { injectWebSocket, type UpgradeHandler, type WebSocketHost } from './websocket.js';

/** Anything with a web-standard `fetch(Request) => Response`, e.g. createLauncher()'s result. */
export interface FetchHandler {
  /**
   * `env.incoming` is Node's IncomingMessage (the hosted service reads the client address from it);
   * `env.webSocket` is there on upgrade requests when the server serves WebSockets (src/http/websocket.ts).
   */
  fetch(request: Request, env?: { incoming: IncomingMessage; webSocket?: WebSocketAcceptor }): Response | Promise<Response>;
}

/** spec/engine.md, "Limits": a `serve` connection idle for 30 seconds is closed. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** Open connections a server accepts at once; past it a new connection is closed unanswered. */
export const DEFAULT_MAX_CONNECTIONS = 256;

/** The connection rules of a server (applyServerLimits, serveNodeHttp). */
export interface ServerLimits {
  /**
   * A connection is closed after this many ms without a byte when no request is being answered: one
   * that never sends a request, one idle between requests, and one whose request headers or body stop
   * arriving (that one gets a 408 first). A request being answered (a long sync run) is not idle.
   * Default 30000 (DEFAULT_IDLE_TIMEOUT_MS).
   */
  idleTimeoutMs?: number;
  /** At most this many open connections; more are closed at once, unanswered. Default 256 (DEFAULT_MAX_CONNECTIONS). */
  maxConnections?: number;
}

export interface NodeHttpOptions extends ServerLimits {
  /** Port to listen on. Default 0: an ephemeral port (read it from `url`). */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /**
   * Serve the handler's WebSocket routes (injectWebSocket): an upgrade request goes to `fetch` with an
   * acceptor, e.g. the hosted service's studio. Default false: Node hands upgrade requests to `fetch`
   * as plain requests.
   */
  webSocket?: boolean;
}

export interface NodeHttpServer {
  /** `http://<host>:<port>` with the port actually bound. */
  url: string;
  port: number;
  server: Server;
  /** The idle timeout in effect (ms). */
  idleTimeoutMs: number;
  /** The connection cap in effect. */
  maxConnections: number;
  /** Stop accepting, close every connection, resolve when the server is closed. */
  close(): Promise<void>;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new TypeError(`[flowctl] [node-http] ${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * Answer on the socket itself, where Node has no ServerResponse to answer with (a parse error, a
 * stalled request): one structured `{error, message}` JSON response, then the connection is closed.
 * When part of a response was already written, the connection is only closed.
 */
function answerOnSocket(socket: Socket, status: number, error: string, message: string, headersSent = false): void {
  if (socket.destroyed) return;
  if (!socket.writable || headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error, message });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

interface InFlight {
  req: IncomingMessage;
  res: ServerResponse;
}

/** Per server: the requests being answered on each socket, and the idle rule's bookkeeping. */
interface ServerState {
  inFlight: WeakMap<Socket, Set<InFlight>>;
  /** socket.bytesRead when its last response was sent: more than that means a request is arriving. */
  answeredAt: WeakMap<Socket, number>;
  idleTimeoutMs?: number;
}

const STATES = new WeakMap<Server, ServerState>();

/** The server's state, with its one 'request' listener (two response listeners per request). */
function stateOf(server: Server): ServerState {
  let state = STATES.get(server);
  if (state) return state;
  const created: ServerState = { inFlight: new WeakMap(), answeredAt: new WeakMap() };
  state = created;
  STATES.set(server, created);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    let set = created.inFlight.get(socket);
    if (!set) created.inFlight.set(socket, (set = new Set()));
    const entry = { req, res };
    set.add(entry);
    res.once('finish', () => {
      set!.delete(entry);
      if (created.idleTimeoutMs === undefined || socket.destroyed) return;
      // Restart the idle clock from the end of the response.
      created.answeredAt.set(socket, socket.bytesRead);
      socket.setTimeout(created.idleTimeoutMs);
    });
    res.once('close', () => set!.delete(entry));
  });
  return state;
}

/**
 * Close connections that stay idle (no bytes for `idleTimeoutMs`) unless a request on them is being
 * answered: one that never sends a request, one between requests (Node's keep-alive timeout is set to
 * the same value), and one whose request stopped arriving: headers without their end, a body shorter
 * than its Content-Length, a chunked body without its last chunk. That one is answered 408
 * `request_timeout` first. A request
 * whose body is complete and is being answered (a long sync run) is never cut.
 * Exported so a host that builds its own node:http server (express, hono) gets the same rule.
 */
export function applyIdleTimeout(server: Server, idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS): void {
  positiveInteger('idleTimeoutMs', idleTimeoutMs);
  const state = stateOf(server);
  state.idleTimeoutMs = idleTimeoutMs;
  server.keepAliveTimeout = idleTimeoutMs;
  // Node's own socket timeout would also cut a long response: we manage idleness per socket instead.
  server.timeout = 0;
  server.on('connection', (socket: Socket) => socket.setTimeout(idleTimeoutMs));
  // With a 'timeout' listener on the server, Node leaves the decision to us instead of destroying
  // the socket itself (which would also cut a response still being computed).
  server.on('timeout', (socket: Socket) => {
    const requests = state.inFlight.get(socket);
    if (!requests || requests.size === 0) {
      // Bytes since the last answer and no request: headers that stopped arriving (or a preface Node
      // waits on) get their 408; a connection that sent nothing since its last answer is just closed.
      if (socket.bytesRead > (state.answeredAt.get(socket) ?? 0)) {
        answerOnSocket(socket, 408, 'request_timeout', `[flowctl] the request stopped arriving for ${idleTimeoutMs} ms; closing the connection`);
      } else {
        socket.destroy();
      }
      return;
    }
    for (const { req, res } of requests) {
      // The headers came, the body did not (all of it): the client stalled, not the server.
      if (!req.complete) {
        answerOnSocket(
          socket,
          408,
          'request_timeout',
          `[flowctl] the request stopped arriving for ${idleTimeoutMs} ms; closing the connection`,
          res.headersSent,
        );
        return;
      }
    }
    // Every request on it was read in full and is being answered: busy, not idle. Look again later.
    socket.setTimeout(idleTimeoutMs);
  });
}

/**
 * Answer what Node refuses before any handler runs with a structured `{error, message}` body: parse
 * errors (a bad method, a raw control byte, malformed chunks or Transfer-Encoding) 400 `bad_request`
 * (a request without Host is passed on to the request listener, whose answer is structured too),
 * headers over Node's limit 431 `headers_too_large`, Node's own header/request timeouts 408
 * `request_timeout`, and `CONNECT` 405 `method_not_allowed`.
 */
export function applyStructuredClientErrors(server: Server): void {
  const { inFlight } = stateOf(server);
  // Node answers an HTTP/1.1 request without Host with an empty 400 of its own; let it through to the
  // request listener, which answers it (structured) like any request it cannot build.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('clientError', (err: NodeJS.ErrnoException & { reason?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const headersSent = [...(inFlight.get(socket) ?? [])].some(({ res }) => res.headersSent);
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      answerOnSocket(socket, 431, 'headers_too_large', '[flowctl] the request headers are too large', headersSent);
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerOnSocket(socket, 408, 'request_timeout', '[flowctl] the request did not arrive in time', headersSent);
    } else {
      const reason = typeof err.reason === 'string' ? err.reason : 'malformed request';
      answerOnSocket(socket, 400, 'bad_request', `[flowctl] the request could not be parsed (${err.code ?? 'error'}: ${reason.slice(0, 120)})`, headersSent);
    }
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    answerOnSocket(socket, 405, 'method_not_allowed', '[flowctl] CONNECT is not supported');
  });
}

/**
 * Every connection rule of `serveNodeHttp` on a node:http server you built yourself (express, hono):
 * idle close (stalled requests included), the connection cap, and structured answers to requests
 * Node refuses (applyIdleTimeout, applyStructuredClientErrors).
 */
export function applyServerLimits(server: Server, limits: ServerLimits = {}): void {
  applyIdleTimeout(server, limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
  server.maxConnections = positiveInteger('maxConnections', limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
  applyStructuredClientErrors(server);
}

/**
 * A node:http request listener for a web-standard handler (through @hono/node-server) that answers
 * requests Node parsed but no Request can be built from (a backslash or raw byte in the path, a
 * missing or malformed Host) with a structured 400 `bad_request` instead of an empty one.
 */
export function nodeRequestListener(handler: FetchHandler): RequestListener {
  return getRequestListener((request, env) => handler.fetch(request, { incoming: env.incoming as IncomingMessage }), {
    errorHandler: requestErrorResponse,
  });
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Serve a web-standard handler on node:http. Resolves once listening. */
export async function serveNodeHttp(handler: FetchHandler, options: NodeHttpOptions = {}): Promise<NodeHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const server = createServer(nodeRequestListener(handler));
  applyServerLimits(server, { idleTimeoutMs, maxConnections });
  // Upgraded connections (WebSockets) leave Node's bookkeeping: the host ends them on close().
  const webSockets = options.webSocket ? injectWebSocket(server, handler) : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: formatUrl(host, port),
    port,
    server,
    idleTimeoutMs,
    maxConnections,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        webSockets?.closeAll();
      });
      return closing;
    },
  };
}
