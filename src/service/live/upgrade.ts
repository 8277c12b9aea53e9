import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { sessionFromCookie } from '../auth/guards.js';
import type { ServiceDeps, SessionAuth } from '../context.js';
import { SERVICE_STATUS_BY_CODE } from '../errors.js';

/**
 * The checks every WebSocket of the hosted service makes before it upgrades (the studio's
 * `/api/authoring/{id}/live`, the run live view's `/api/automations/{id}/live`): an allowlisted
 * Origin, then a valid session cookie. A refusal is answered over the raw socket as an ordinary HTTP
 * answer with a `{error, message}` body, and no upgrade happens.
 */

/** Frames are dropped (not queued) while more than this many bytes wait in a viewer's socket. */
export const FRAME_BACKLOG_BYTES = 512 * 1024;

export interface UpgradeRefusal {
  code: string;
  message: string;
}

/** Answer a refused upgrade with an HTTP status and `{error, message}`, then close the socket. */
export function answerUpgrade(socket: Duplex, code: string, message: string): void {
  if (socket.destroyed) return;
  const status = SERVICE_STATUS_BY_CODE[code] ?? 500;
  const body = JSON.stringify({ error: code, message });
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
    () => socket.destroy(),
  );
}

/**
 * The Origin must be on SVC_ORIGINS. A missing Origin is refused too: browsers always send one on a
 * WebSocket, and the session cookie must never open one from another site (cross-site WebSocket
 * hijacking).
 */
export function originRefusal(req: IncomingMessage, deps: Pick<ServiceDeps, 'settings'>): UpgradeRefusal | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined && deps.settings.origins.includes(origin.replace(/\/+$/, ''))) return undefined;
  return {
    code: 'forbidden',
    message:
      origin === undefined
        ? 'a WebSocket needs an Origin on SVC_ORIGINS'
        : `WebSockets from origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (SVC_ORIGINS)`,
  };
}

/** The caller the upgrade's session cookie names, or the refusal (401 `unauthenticated`). */
export async function upgradeSession(req: IncomingMessage, deps: ServiceDeps): Promise<SessionAuth | UpgradeRefusal> {
  const auth = await sessionFromCookie(req.headers.cookie, deps);
  if (auth === 'none' || auth === 'invalid') return { code: 'unauthenticated', message: 'sign in first: no valid session cookie' };
  return auth;
}

export const isRefusal = (x: object): x is UpgradeRefusal => 'code' in x;

/** The path's `{id}` segment decoded, or undefined when it does not decode. */
export function pathId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The upgrade of a live socket: `admit` checks the request (and the limits, counting `pending()`),
 * then the socket is upgraded and `open` takes it; a refusal, or an `admit` that throws, is answered
 * over the raw socket. An admitted socket counts as pending (against its org's limit too) until
 * `open` has it, or until it closes (ws answers a malformed handshake itself without calling back).
 */
export interface UpgradeGate {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Admitted sockets not yet open: all of them, or one org's. */
  pending(orgId?: string): number;
}

export function createUpgradeGate<T extends { orgId: string }>(options: {
  wss: WebSocketServer;
  admit: (req: IncomingMessage) => Promise<UpgradeRefusal | T>;
  open: (ws: WebSocket, admitted: T, req: IncomingMessage) => void;
  logger: Pick<ServiceDeps['logger'], 'error'>;
  /** The log line's tag: `studio`, `run-live`. */
  tag: string;
}): UpgradeGate {
  let waiting: { orgId: string }[] = [];
  return {
    pending: (orgId) => (orgId === undefined ? waiting.length : waiting.filter((p) => p.orgId === orgId).length),
    upgrade(req, socket, head) {
      socket.on('error', () => socket.destroy());
      (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
      void options.admit(req).then(
        (res) => {
          if (isRefusal(res)) return answerUpgrade(socket, res.code, res.message);
          const slot = { orgId: res.orgId };
          waiting.push(slot);
          const free = () => (waiting = waiting.filter((p) => p !== slot));
          socket.once('close', free);
          options.wss.handleUpgrade(req, socket, head, (ws) => {
            socket.off('close', free);
            free();
            options.open(ws, res, req);
          });
        },
        (err) => {
          options.logger.error(`[flowctl] [${options.tag}] upgrade: ${(err as Error)?.stack ?? String(err)}`);
          answerUpgrade(socket, 'internal_error', 'the upgrade could not be checked');
        },
      );
    },
  };
}

/**
 * Keep a live socket open through proxies that cut quiet connections, and find viewers that are
 * gone without a close (a laptop lid shut, a dropped network): a protocol ping every `intervalMs`
 * (browsers answer it themselves). A socket that has answered none of the last two pings by the next
 * tick is terminated, which runs its close handlers (two, so that a stalled event loop on either
 * side never drops a live viewer). Returns the stop function (also called on close).
 */
export function keepAlive(ws: WebSocket, intervalMs: number): () => void {
  let unanswered = 0;
  const onPong = () => {
    unanswered = 0;
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (ws.readyState !== ws.OPEN) return;
    if (unanswered >= 2) {
      stop();
      ws.terminate();
      return;
    }
    unanswered += 1;
    ws.ping();
  }, intervalMs);
  timer.unref?.();
  const stop = () => {
    clearInterval(timer);
    ws.off('pong', onPong);
  };
  ws.once('close', stop);
  return stop;
}
