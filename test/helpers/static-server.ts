import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';

/**
 * A folder's files on 127.0.0.1, an ephemeral port (GET only; `/` and folders serve index.html).
 * Used for real apps installed from npm (node_modules/todomvc): they are served as they ship.
 */

export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.jsx': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

export interface StaticServerOptions {
  /** A variant of the app: each file's bytes may be rewritten before they are served (by URL path). */
  transform?(path: string, body: Buffer): Buffer;
}

export async function startStaticServer(folder: string, options: StaticServerOptions = {}): Promise<StaticServer> {
  const root = resolve(folder);
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let path: string;
    try {
      path = normalize(join(root, decodeURIComponent(url.pathname)));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (req.method !== 'GET' || (path !== root && !path.startsWith(root + sep))) {
      res.writeHead(404).end();
      return;
    }
    try {
      if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
      const read = await readFile(path);
      const body = options.transform ? options.transform(url.pathname, read) : read;
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
