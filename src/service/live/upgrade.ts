import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { sessionFromCookie } from '../auth/guards.js';
import type { ServiceDeps, SessionAuth } from '../context.js';
import { SERVICE_STATUS_BY_CODE } from '../errors.js';

/**
 * The checks every WebSocket of the hosted service makes before it upgrades (the studio's
 * `/api/authoring/{id}/live`, the run live view's `/api/automations/{id}/live`): an allowlisted
 * Origin, then a valid session cookie. A refusal is answered over the raw socket as an ordinary HTTP
 * answer with a `{error, message}` body, and no upgrade happens.
 */

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
    [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body].join('\r\n'),
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
    message: origin === undefined ? 'a WebSocket needs an Origin on SVC_ORIGINS' : `WebSockets from origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (SVC_ORIGINS)`,
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
