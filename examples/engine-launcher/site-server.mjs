// The demo page the example's browser Recording drives, served on loopback by the example itself.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

const PAGE = new URL('./site/index.html', import.meta.url);

/** Serve site/index.html at `/` on 127.0.0.1 (port 0: an ephemeral port). Resolves {url, close()}. */
export async function serveDemoSite({ host = '127.0.0.1', port = 0 } = {}) {
  const html = await readFile(PAGE);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && (path === '/' || path === '/index.html')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const url = `http://${host}:${server.address().port}/`;
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
