import type { MiddlewareHandler } from 'hono';
import type { ServiceEnv } from './context.js';

/**
 * Stalled request bodies are closed (docs/hosted-api.md, "Requests and errors"): while a request's
 * body is still arriving, its connection is closed after `bodyIdleTimeoutMs` without a byte (the
 * socket's timeout; served by flowctl/adapters/node-http the client gets a 408 `request_timeout`
 * first, as `serve` answers). When the body has arrived the socket's own timeout is put back, so a
 * long answer (a sync run) is never cut by this window.
 */

interface IncomingLike {
  complete?: boolean;
  once?(event: 'end' | 'close', listener: () => void): unknown;
  socket?: { timeout?: number; setTimeout?(ms: number): unknown; destroyed?: boolean };
}

export function bodyIdleGuard(bodyIdleTimeoutMs: number): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    const incoming = c.env?.incoming as IncomingLike | undefined;
    const socket = incoming?.socket;
    // Only a request that declares a body (a GET's handler never reads one, so no 'end' would come).
    const length = c.req.header('content-length');
    const declared = (length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined;
    if (declared && incoming && socket?.setTimeout && incoming.complete === false && !socket.destroyed) {
      const previous = socket.timeout ?? 0;
      socket.setTimeout(bodyIdleTimeoutMs);
      let restored = false;
      const restore = () => {
        if (restored || socket.destroyed) return;
        restored = true;
        socket.setTimeout!(previous);
      };
      incoming.once?.('end', restore);
      incoming.once?.('close', restore);
    }
    return next();
  };
}
