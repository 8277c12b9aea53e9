import type { WebSocket } from 'ws';
import { webSocketAcceptor, type WebSocketBindings } from '../../http/websocket.js';
import { sessionFromCookie } from '../auth/guards.js';
import type { ServiceDeps, SessionAuth } from '../context.js';
import { isFlowError } from '../../errors.js';
import { SERVICE_STATUS_BY_CODE, serviceError } from '../errors.js';

/**
 * The checks every WebSocket of the hosted service makes before it upgrades (the studio's
 * `/api/authoring/{id}/live`, the run live view's `/api/automations/{id}/live`): an allowlisted
 * Origin, then a valid session cookie. Their routes are ordinary routes: a refusal is thrown as a
 * service error and answered like any other (`{error, message}` with its status), and no upgrade
 * happens; the runtime upgrades only what a route accepted (src/http/websocket.ts).
 */

/** Frames are dropped (not queued) while more than this many bytes wait in a viewer's socket. */
export const FRAME_BACKLOG_BYTES = 512 * 1024;

/**
 * The Origin must be on SVC_ORIGINS. A missing Origin is refused too: browsers always send one on a
 * WebSocket, and the session cookie must never open one from another site (cross-site WebSocket
 * hijacking).
 */
export function checkSocketOrigin(request: Request, deps: Pick<ServiceDeps, 'settings'>): void {
  const origin = request.headers.get('origin') ?? undefined;
  if (origin !== undefined && deps.settings.origins.includes(origin.replace(/\/+$/, ''))) return;
  throw serviceError(
    'forbidden',
    origin === undefined
      ? 'a WebSocket needs an Origin on SVC_ORIGINS'
      : `WebSockets from origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (SVC_ORIGINS)`,
  );
}

/** The caller the upgrade's session cookie names; 401 `unauthenticated` without one. */
export async function socketSession(request: Request, deps: ServiceDeps): Promise<SessionAuth> {
  const auth = await sessionFromCookie(request.headers.get('cookie') ?? undefined, deps);
  if (auth === 'none' || auth === 'invalid') throw serviceError('unauthenticated', 'sign in first: no valid session cookie');
  return auth;
}

/** The path's `{id}` segment decoded, or undefined when it does not decode. */
export function pathId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * A live socket's route: `admit` checks the request (and the limits, counting `pending()`), throwing
 * a service error to refuse; then the runtime upgrades and `open` takes the socket. An admitted socket
 * counts as pending (against its org's limit too) until `open` has it, or until the upgrade does not
 * happen (the client went away, or the runtime answered a malformed handshake 400 itself).
 */
export interface LiveSocketRoute {
  /** The route's handler: 426 `upgrade_required` for a plain request or a host that does not upgrade. */
  handle(request: Request, env: WebSocketBindings | undefined): Promise<Response>;
  /** Admitted sockets not yet open: all of them, or one org's. */
  pending(orgId?: string): number;
}

export function createLiveSocketRoute<T extends { orgId: string }>(options: {
  /** The largest viewer message, in bytes; a larger one closes the socket (1009). */
  maxPayload: number;
  admit: (request: Request) => Promise<T>;
  open: (ws: WebSocket, admitted: T, request: Request) => void;
}): LiveSocketRoute {
  let waiting: { orgId: string }[] = [];
  return {
    pending: (orgId) => (orgId === undefined ? waiting.length : waiting.filter((p) => p.orgId === orgId).length),
    async handle(request, env) {
      const acceptor = webSocketAcceptor(request, env);
      if (!acceptor) throw serviceError('upgrade_required', 'this is a WebSocket: connect with Upgrade: websocket');
      let admitted: T;
      try {
        admitted = await options.admit(request);
      } catch (err) {
        // A refusal is `{error, message}` whatever its code (invalid_request too); anything else is
        // the service's usual 500 or 503.
        const status = isFlowError(err) ? SERVICE_STATUS_BY_CODE[err.code] : undefined;
        if (status === undefined || !isFlowError(err)) throw err;
        return Response.json({ error: err.code, message: err.message }, { status, headers: { 'content-type': 'application/json; charset=utf-8' } });
      }
      const slot = { orgId: admitted.orgId };
      waiting.push(slot);
      const free = () => (waiting = waiting.filter((p) => p !== slot));
      return acceptor.accept({
        maxPayload: options.maxPayload,
        open: (ws: WebSocket) => {
          free();
          options.open(ws, admitted, request);
        },
        abort: free,
      });
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
