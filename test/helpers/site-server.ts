import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';
import { expect } from 'vitest';
import { FlowError } from '../../src/errors.js';

/**
 * The fixture site (test/fixtures/site/) on 127.0.0.1, an ephemeral port. A variant folder
 * (`drift-renamed`, `drift-removed`) overlays `base/`: its files win, the others come from base.
 * POST /login checks the password given here and sets a `session` cookie; it never logs anything.
 */

export const SITE_DIR = resolve(import.meta.dirname, '../fixtures/site');
export type SiteVariant = 'base' | 'drift-renamed' | 'drift-removed';

export interface SiteServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Successful and failed logins, by user name (never the password). */
  logins: { user: string; ok: boolean }[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((res, rej) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
      if (body.length > 64 * 1024) req.destroy();
    });
    req.on('end', () => res(body));
    req.on('error', rej);
  });
}

export async function startSite(options: { password: string; variant?: SiteVariant }): Promise<SiteServer> {
  const variant = options.variant ?? 'base';
  const logins: SiteServer['logins'] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/login') {
      const form = new URLSearchParams(await readBody(req));
      const user = form.get('user') ?? '';
      const ok = user !== '' && form.get('password') === options.password;
      logins.push({ user, ok });
      res.writeHead(
        303,
        ok ? { location: '/app.html', 'set-cookie': `session=${encodeURIComponent(user)}; Path=/; SameSite=Lax` } : { location: '/index.html?error=1' },
      );
      res.end();
      return;
    }
    const path = normalize(url.pathname === '/' ? '/index.html' : url.pathname);
    if (req.method !== 'GET' || path.includes('..')) {
      res.writeHead(404).end();
      return;
    }
    for (const dir of [variant, 'base']) {
      try {
        const body = await readFile(join(SITE_DIR, dir, path));
        res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
        res.end(body);
        return;
      } catch {
        // not in this layer
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    logins,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Copy the fixture ops file `ops/<name>.yaml` into `project`, with each `{{KEY}}` of `values`
 * replaced (the site's URL, say): the ops a test records with `flowctl record --ops ops/<name>.yaml`.
 */
export async function writeSiteOps(project: string, name: string, values: Record<string, string>): Promise<void> {
  await mkdir(join(project, 'ops'), { recursive: true });
  let text = await readFile(join(SITE_DIR, `ops/${name}.yaml`), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  await writeFile(join(project, `ops/${name}.yaml`), text);
}

/** The FlowError a step (a tool's promise) fails with; fails the test if it succeeds or throws anything else. */
export async function stepFailure(p: Promise<unknown>): Promise<FlowError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FlowError);
    return err as FlowError;
  }
  throw new Error('expected the step to fail');
}
