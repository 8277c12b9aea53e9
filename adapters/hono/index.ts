import { Hono } from 'hono';
import { basePath } from 'hono/route';

/** Anything with a web-standard `fetch(Request) => Response`, e.g. createLauncher()'s result. */
export interface FetchHandler {
  fetch(request: Request): Response | Promise<Response>;
}

/**
 * A Hono sub-app that answers every method and path with `handler`, to mount with
 * `app.route('/flowctl', flowctlHono(launcher))` (or at `/`). The mount prefix is removed from the
 * URL before the handler sees it, so the handler's own routes (`/flows/...`) match.
 */
export function flowctlHono(handler: FetchHandler): Hono {
  const app = new Hono();
  app.all('*', async (c) => {
    // The path this sub-app is mounted at, with its parameters filled in, e.g. `/flowctl`.
    const prefix = basePath(c).replace(/\/+$/, '');
    const url = new URL(c.req.url);
    if (prefix && (url.pathname === prefix || url.pathname.startsWith(`${prefix}/`))) {
      url.pathname = url.pathname.slice(prefix.length) || '/';
    }
    const raw = c.req.raw;
    const request =
      url.href === raw.url
        ? raw
        : new Request(url, { method: raw.method, headers: raw.headers, body: raw.body, signal: raw.signal, duplex: 'half' } as RequestInit);
    return handler.fetch(request);
  });
  return app;
}
