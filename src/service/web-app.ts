import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import type { MiddlewareHandler } from 'hono';

/**
 * The web app (web/, built into dist/web) served by the hosted service at `/` on the API's origin
 * (docs/hosted-api.md, "Web app"): static files, and index.html for client routes. It never answers a
 * path the API owns: the reserved prefixes below, plus the first segment of every route of the route
 * table, fall through to the API's own answers (its 404 and 405 bodies included).
 */

/**
 * Paths of HOSTED-API.md that belong to the API, whatever the route table holds. `/.well-known` is
 * machine discovery (RFC 8615: OAuth metadata and the like): a client probing it must get a JSON 404
 * for a document the service does not publish, never the app's page with a 200.
 */
export const API_PREFIXES: readonly string[] = ['/api', '/v1', '/mcp', '/openapi.json', '/docs', '/healthz', '/readyz', '/.well-known'];

/** Whether `path` is `prefix` itself or below it (`/api`, `/api/x`; not `/apis`). */
export function isReservedPath(path: string, reserved: readonly string[]): boolean {
  const p = path.toLowerCase();
  return reserved.some((r) => p === r || p.startsWith(`${r}/`));
}

/** The reserved prefixes: API_PREFIXES plus the first segment of each route path (`/example/site` -> `/example`). */
export function reservedPrefixes(routePaths: readonly string[]): string[] {
  const first = routePaths.map((p) => `/${p.split('/')[1] ?? ''}`).filter((p) => p !== '/');
  return [...new Set([...API_PREFIXES, ...first].map((p) => p.toLowerCase()))];
}

/** Where this module is: a `.ts` file from sources (tests), a built file in dist otherwise. */
function here(): string {
  // The CJS build has __filename and an empty import.meta; ESM has import.meta.url.
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);
}

/**
 * The package's built web app, when it is there: dist/web beside the built modules (this code sits
 * in dist/, or in dist/cli/), or the repository's dist/web when running from sources.
 */
export function defaultWebRoot(): string | undefined {
  const file = here();
  const dir = dirname(file);
  const candidates = file.endsWith('.ts') ? [resolve(dir, '../../dist/web')] : [join(dir, 'web'), resolve(dir, '..', 'web')];
  return candidates.find((c) => existsSync(join(c, 'index.html')));
}

/** The app's pages may load only what its own origin serves. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/** A last path segment with a dot names a file (`app.js`, `favicon.ico`): no index.html fallback for it. */
const FILE_LIKE = /\/[^/]*\.[^/]*$/;

/**
 * GET/HEAD handler for everything outside the reserved prefixes: a file of `root`, else index.html
 * for a client route (a path whose last segment has no dot), else the API's 404.
 */
export function webAppHandler(root: string, reserved: readonly string[]): MiddlewareHandler {
  const headers = (path: string, c: Parameters<MiddlewareHandler>[0]) => {
    // Vite names built assets by content hash: they never change under their name.
    if (/[\\/]assets[\\/]/.test(path)) c.header('cache-control', 'public, max-age=31536000, immutable');
    else c.header('cache-control', 'no-cache');
    if (path.endsWith('.html')) {
      c.header('content-security-policy', CSP);
      c.header('x-frame-options', 'DENY');
    }
  };
  const files = serveStatic({ root, onFound: headers });
  const index = serveStatic({ root, path: 'index.html', onFound: headers });
  return async (c, next) => {
    const path = c.req.path;
    if (isReservedPath(path, reserved)) return next();
    let missing = false;
    const found = await files(c, async () => {
      missing = true;
    });
    if (!missing && found) return found;
    if (FILE_LIKE.test(path) || path.includes('%')) return next();
    let noIndex = false;
    const page = await index(c, async () => {
      noIndex = true;
    });
    return !noIndex && page ? page : next();
  };
}
