import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';

/** Anything with a web-standard `fetch(Request) => Response`, e.g. createLauncher()'s result. */
export interface FetchHandler {
  /** `env.incoming` is Node's IncomingMessage (the hosted service reads the client address from it). */
  fetch(request: Request, env?: { incoming: IncomingMessage }): Response | Promise<Response>;
}

export interface NodeHttpOptions {
  /** Port to listen on. Default 0: an ephemeral port (read it from `url`). */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** A connection with no request in flight is closed after this many ms. Default 30000 (spec/engine.md, "Limits"). */
  idleTimeoutMs?: number;
}

export interface NodeHttpServer {
  /** `http://<host>:<port>` with the port actually bound. */
  url: string;
  port: number;
  server: Server;
  /** Stop accepting, close every connection, resolve when the server is closed. */
  close(): Promise<void>;
}

/**
 * Close connections that stay idle (no request in flight, no bytes) for `idleTimeoutMs`, including
 * ones that never send a request. A request still being answered (a long sync run) is not idle.
 * Exported so a host that builds its own node:http server (express, hono) gets the same rule.
 */
export function applyIdleTimeout(server: Server, idleTimeoutMs = 30_000): void {
  const busy = new WeakMap<Socket, number>();
  server.keepAliveTimeout = idleTimeoutMs;
  // Node's own socket timeout would also cut a long response: we manage idleness per socket instead.
  server.timeout = 0;
  server.on('connection', (socket: Socket) => socket.setTimeout(idleTimeoutMs));
  // With a 'timeout' listener on the server, Node leaves the decision to us instead of destroying
  // the socket itself (which would also cut a response still being computed).
  server.on('timeout', (socket: Socket) => {
    if (!busy.get(socket)) socket.destroy();
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      busy.set(socket, (busy.get(socket) ?? 1) - 1);
      // Restart the idle clock from the end of the response.
      if (!socket.destroyed) socket.setTimeout(idleTimeoutMs);
    };
    res.on('finish', finish);
    res.on('close', finish);
  });
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Serve a web-standard handler on node:http. Resolves once listening. */
export async function serveNodeHttp(handler: FetchHandler, options: NodeHttpOptions = {}): Promise<NodeHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer(getRequestListener((request, env) => handler.fetch(request, { incoming: env.incoming as IncomingMessage })));
  applyIdleTimeout(server, options.idleTimeoutMs ?? 30_000);
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
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
