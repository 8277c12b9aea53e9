import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FlowError } from '../../src/errors.js';
import type { EgressGuard } from '../../src/tools/egress.js';

/**
 * The browser side of the egress guard (docs/tools.md, "Policy"): a forward proxy on 127.0.0.1 that
 * one run's browser context sends every request through (the context's `proxy`, loopback included).
 * It resolves each destination and checks every address with the run's guard when it connects,
 * then connects to exactly the checked address. Every hop of a redirect chain, every subresource,
 * fetch/XHR, WebSocket and HTTPS tunnel (CONNECT) is a request of its own here, so neither redirects
 * nor DNS rebinding get around it. A refusal answers 403 with `x-flowctl-egress: denied` (plain HTTP)
 * or refuses the tunnel, and is recorded for the browser tools to turn into `egress_denied`.
 */

export interface EgressRefusal {
  /** `http://host:port/path` for a plain request, `host:port` for a tunnel (CONNECT). */
  target: string;
  error: FlowError;
}

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`, for the context's `proxy.server`. */
  readonly server: string;
  /** Every refusal so far, oldest first (the last 100). */
  readonly refusals: EgressRefusal[];
  /** The refusal of a request to `url` (a plain URL, or an https/wss URL's tunnel), if there was one. */
  refusalOf(url: string): EgressRefusal | undefined;
  /**
   * Give a proxy started without a guard (a warm context's, before a run takes it) the run's guard.
   * Until then it refuses every destination; binding forgets those refusals. Throws when already bound.
   */
  bind(guard: EgressGuard): void;
  close(): Promise<void>;
}

/** The guard of a proxy no run holds yet: every destination refused. */
const UNBOUND: EgressGuard = {
  precheck() {
    throw unboundError();
  },
  resolve() {
    return Promise.reject(unboundError());
  },
};

function unboundError(): FlowError {
  return new FlowError('egress_denied', '[flowctl] [egress] this browser context belongs to no run yet: every destination is refused', {
    data: { retryable: false },
  });
}
// Not `import ... from 'node:http'`: Node builds an ES module facade of every builtin imported that
// way, which reads each export, and node:http's lazy undici exports then load undici and zlib (tens of
// ms on every CLI start that loads the browser tools, proxy or not). getBuiltinModule reads only these.
const { createServer, request: httpRequest, Agent: HttpAgent } = process.getBuiltinModule('node:http');

export const DENIED_HEADER = 'x-flowctl-egress';
const MAX_REFUSALS = 100;
// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded.
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** `host:port` as a tunnel names it (`[::1]:443`). */
export function tunnelKey(url: URL): string {
  const port = url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}

function forwardHeaders(raw: string[], keepUpgrade = false): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP.has(lower) && !(keepUpgrade && (lower === 'upgrade' || lower === 'connection'))) continue;
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1]! : [...[prev].flat(), raw[i + 1]!];
  }
  return out;
}

function responseHeaders(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

/** A request that carries no body (so it can be sent again as is). */
function bodyless(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
}

/** Split a CONNECT target `host:port` / `[v6]:port`. */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

export async function startEgressProxy(initial?: EgressGuard): Promise<EgressProxy> {
  let guard = initial ?? UNBOUND;
  const refusals: EgressRefusal[] = [];
  const byTarget = new Map<string, EgressRefusal>();
  const sockets = new Set<Duplex>();
  const origins = new HttpAgent({ keepAlive: true });
  const track = (s: Duplex) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const refuse = (target: string, error: FlowError) => {
    const refusal = { target, error };
    refusals.push(refusal);
    if (refusals.length > MAX_REFUSALS) {
      const old = refusals.shift()!;
      if (byTarget.get(old.target) === old) byTarget.delete(old.target);
    }
    byTarget.set(target, refusal);
  };
  const denialText = (error: FlowError) =>
    `HTTP/1.1 403 Forbidden\r\n${DENIED_HEADER}: denied\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(error.message)}\r\nconnection: close\r\n\r\n${error.message}`;

  const server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = new URL('invalid:');
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('[flowctl] [egress] this proxy takes absolute http URLs and CONNECT only');
      return;
    }
    const port = Number(url.port) || 80;
    guard.resolve(url.hostname, port).then(
      ({ address }) => forward(req, res, url, address, port, true),
      (error: FlowError) => {
        refuse(url.href, error);
        res.writeHead(403, { [DENIED_HEADER]: 'denied', 'content-type': 'text/plain', connection: 'close' }).end(error.message);
      },
    );
  });

  /**
   * Send a checked plain request on to exactly the checked address. Connections to the origin are kept
   * alive per proxy (the agent pools them by that address): a page's files then share a few connections
   * instead of one each. The guard still checks every request before it is sent (above); a pooled
   * socket only ever reaches the address it was opened to. A request without a body that fails on a
   * reused socket (the origin closed it while idle) is sent once more on a new connection.
   */
  const forward = (req: IncomingMessage, res: ServerResponse, url: URL, address: string, port: number, mayRetry: boolean) => {
    const upstream = httpRequest({
      host: address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: forwardHeaders(req.rawHeaders),
      agent: mayRetry ? origins : false,
    });
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, responseHeaders(up.rawHeaders));
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (mayRetry && upstream.reusedSocket && !res.headersSent && !res.destroyed && bodyless(req)) return forward(req, res, url, address, port, false);
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    });
    // Only a response cut short (the browser went away) stops the upstream request: once finished, its
    // socket is back in the pool.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };

  const tunnel = (client: Duplex, host: string, port: number, head: Buffer, target: string, opening: (up: Socket) => void) => {
    track(client);
    guard.resolve(host, port).then(
      ({ address }) => {
        const up = netConnect({ host: address, port });
        track(up);
        up.once('connect', () => {
          opening(up);
          if (head.length > 0) up.write(head);
          up.pipe(client);
          client.pipe(up);
        });
        up.once('close', () => client.destroy());
        client.once('close', () => up.destroy());
      },
      (error: FlowError) => {
        refuse(target, error);
        client.end(denialText(error));
      },
    );
  };

  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const target = splitTarget(req.url ?? '');
    if (!target) {
      track(client);
      client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      return;
    }
    tunnel(client, target.host, target.port, head, req.url!, () => client.write('HTTP/1.1 200 Connection Established\r\n\r\n'));
  });

  // A plain ws:// upgrade sent in absolute form (browsers normally tunnel WebSockets with CONNECT).
  server.on('upgrade', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      track(client);
      client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      return;
    }
    const port = Number(url.port) || 80;
    tunnel(client, url.hostname, port, head, url.href, (up) => {
      const headers = forwardHeaders(req.rawHeaders, true);
      const lines = Object.entries(headers).flatMap(([k, v]) => [v].flat().map((x) => `${k}: ${String(x)}`));
      up.write(`${req.method} ${url.pathname}${url.search} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    });
  });

  server.on('connection', (socket) => track(socket));
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    server: `http://127.0.0.1:${port}`,
    refusals,
    refusalOf(text) {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        return undefined;
      }
      return url.protocol === 'http:' || url.protocol === 'ws:' ? (byTarget.get(url.href) ?? byTarget.get(tunnelKey(url))) : byTarget.get(tunnelKey(url));
    },
    bind(next) {
      if (guard !== UNBOUND) throw new Error('[flowctl] [egress] this proxy already has its guard');
      guard = next;
      refusals.length = 0;
      byTarget.clear();
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        origins.destroy();
      });
      return closed;
    },
  };
}
