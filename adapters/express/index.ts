import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { requestErrorResponse } from '../../src/http/errors.js';

/** Anything with a web-standard `fetch(Request) => Response`, e.g. createLauncher()'s result. */
export interface FetchHandler {
  fetch(request: Request): Response | Promise<Response>;
}

/** The express middleware signature, typed structurally so express stays an optional peer dependency. */
export type ExpressMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

type ParsedRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer };

/**
 * When a body parser (express.json(), express.text(), express.raw()) already consumed the stream,
 * hand its bytes back: @hono/node-server reads `rawBody` instead of the drained stream.
 */
function restoreConsumedBody(req: ParsedRequest): void {
  if (!req.readableDidRead || req.rawBody instanceof Buffer || req.body === undefined) return;
  const body = req.body;
  req.rawBody = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

/**
 * Mount a web-standard handler in an express app, at a path prefix that the handler owns:
 * `app.use('/flowctl', flowctlExpress(launcher))`. Express strips the prefix from `req.url`, so the
 * handler sees its own routes (`/flows/...`). Mount it before body parsers when you can: a parser
 * that ran first applies its own size limit, and its parsed body is re-serialized for the handler.
 */
export function flowctlExpress(handler: FetchHandler): ExpressMiddleware {
  // A request no web Request can be built from (a backslash or raw byte in the path) is answered
  // with a structured 400, like every other answer of the handler.
  const listener = getRequestListener((request) => handler.fetch(request), { errorHandler: requestErrorResponse });
  return (req, res, next) => {
    restoreConsumedBody(req);
    listener(req, res).catch(next);
  };
}
