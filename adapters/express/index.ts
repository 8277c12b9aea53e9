import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';

/** Anything with a web-standard `fetch(Request) => Response`, e.g. createLauncher()'s result. */
export interface FetchHandler {
  fetch(request: Request): Response | Promise<Response>;
}

/** The express middleware signature, typed structurally so express stays an optional peer dependency. */
export type ExpressMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * Mount a web-standard handler in an express app, at a path prefix that the handler owns:
 * `app.use('/flowctl', flowctlExpress(launcher))`. Express strips the prefix from `req.url`, so the
 * handler sees its own routes (`/flows/...`). Mount it before any body parser (express.json()
 * would consume the body the handler needs to read and limit itself).
 */
export function flowctlExpress(handler: FetchHandler): ExpressMiddleware {
  const listener = getRequestListener((request) => handler.fetch(request));
  return (req, res, next) => {
    listener(req, res).catch(next);
  };
}
