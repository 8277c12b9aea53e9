import { DEFAULT_MAX_CONNECTIONS, serveNodeHttp } from '../../adapters/node-http/index.js';
import type { Storage } from '../../src/engine-entry.js';
import { createLauncher } from '../../src/launcher/launcher.js';
import { isLoopbackHost } from '../../src/http/host.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { openStore, STORE_DIR } from '../project.js';
import { openServedEngine, type ServedEngine } from '../served-flows.js';

const FLAGS = ['registry', 'port', 'host', 'allow-remote', 'token', 'store', 'allow-secret-refs', 'max-connections'];
const DEFAULT_PORT = 8080;
const DEFAULT_HOST = '127.0.0.1';

/** Loopback: 127.0.0.0/8, ::1 (also as an IPv4-mapped 127.x address) and the name localhost. */
export { isLoopbackHost };

/** `--max-connections=<n>` (the flag is not one of the separated value flags, so the `=` form). */
function parseMaxConnections(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_CONNECTIONS;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535) {
    throw new UsageError(`--max-connections must be an integer from 1 to 65535 (--max-connections=<n>), got "${String(value)}"`);
  }
  return Number(value);
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${value}"`);
  return Number(value);
}

async function openStorage(io: CliIO, store: string | undefined): Promise<{ storage: Storage; label: string }> {
  if (store === undefined || store === 'fs') return { storage: openStore(io.cwd), label: `${STORE_DIR}/` };
  const { sqlStorageFromEnv, DEFAULT_PGLITE_DIR } = await import('../../adapters/storage-sql/index.js');
  const storage = sqlStorageFromEnv({ env: io.env, cwd: io.cwd, defaultDataDir: DEFAULT_PGLITE_DIR });
  return { storage, label: io.env.DATABASE_URL ? 'Postgres (DATABASE_URL)' : `PGlite in ${DEFAULT_PGLITE_DIR}` };
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolvePromise) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolvePromise(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * `flowctl serve [flow]`: the REST launcher for development (docs/rest.md). Binds loopback unless
 * both --allow-remote and a token are given. Runs go to the project's store, so `inspect` and
 * `replay` see runs started over HTTP. Stops cleanly on SIGINT/SIGTERM (exit 0).
 */
export default async function serve(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'serve', FLAGS);
  if (args.positionals.length > 1) throw new UsageError('serve takes at most one [flow]');
  const only = args.positionals[0];
  const host = flagString(args, 'host') ?? DEFAULT_HOST;
  const port = parsePort(flagString(args, 'port'));
  const maxConnections = parseMaxConnections([args.flags['max-connections']].flat().pop());
  const allowRemote = flagBool(args, 'allow-remote');
  // Off by default: a caller could otherwise send any FLOWCTL_SECRET_* to a URL of its choosing.
  const allowSecretRefs = flagBool(args, 'allow-secret-refs');
  const token = flagString(args, 'token') ?? (io.env.FLOWCTL_SERVE_TOKEN || undefined);
  const registry = flagString(args, 'registry');
  const store = flagString(args, 'store');
  if (token !== undefined && token.trim() === '') throw new UsageError('--token must not be empty');
  if (store !== undefined && store !== 'fs' && store !== 'sql') throw new UsageError(`--store must be fs or sql (--store=sql), got "${store}"`);
  if (!isLoopbackHost(host) && !(allowRemote && token !== undefined)) {
    const missing = [!allowRemote && '--allow-remote', token === undefined && 'a token (--token or FLOWCTL_SERVE_TOKEN)'].filter(Boolean).join(' and ');
    throw new UsageError(`refusing to serve on non-loopback host "${host}" without ${missing}; nothing was bound`);
  }

  let running: ServedEngine | undefined;
  try {
    let label = '';
    running = await openServedEngine(io, {
      command: 'serve',
      only,
      registry,
      openStorage: async () => {
        const opened = await openStorage(io, store);
        label = opened.label;
        return opened.storage;
      },
      // recoverDeadPids: a run left by a serve of this host that is gone (SIGKILL) ends worker_lost at
      // start, not a lease time later; runs of live processes and of other hosts wait for their lease.
      engine: { allowSecretRefs, recoverDeadPids: true },
    });
    const { engine, source } = running;
    const launcher = createLauncher({
      engine,
      flows: source.flows,
      token,
      // Without a token only loopback Host names are answered (DNS rebinding); the --host given is one.
      allowedHosts: [host],
      allowSecretRefs,
      logger: { debug() {}, info() {}, warn() {}, error: (m, d) => io.stderr.write(`${m}${d ? ` ${JSON.stringify(d)}` : ''}\n`) },
    });
    const served = await launcher.flows();
    // The CLI's own bookkeeping: the project's store records what `serve` served under each name
    // (front rest), once at start. The launcher itself runs by digest and writes no deploy.
    for (const f of served) await engine.deploy(f.name, f.spec, { front: 'rest' });
    const handler = {
      async fetch(request: Request) {
        const res = await launcher.fetch(request);
        io.stderr.write(`${request.method} ${new URL(request.url).pathname} ${res.status}\n`);
        return res;
      },
    };
    const server = await serveNodeHttp(handler, { port, host, maxConnections });
    const lines = [`flowctl serve: listening on ${server.url}`];
    for (const f of served) lines.push(`  POST ${server.url}/flows/${f.name}/runs  ${f.digest}  (${source.origin.get(f.name)})`);
    if (allowSecretRefs) lines.push('--allow-secret-refs: callers may name any FLOWCTL_SECRET_* for a secret input');
    lines.push(`runs are stored in ${label}${token ? '; requests need Authorization: Bearer <token>' : ''}; Ctrl-C stops`);
    io.stderr.write(`${lines.join('\n')}\n`);
    const signal = await untilSignal();
    io.stderr.write(`flowctl serve: ${signal}, stopping\n`);
    await server.close();
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if (
      (err as NodeJS.ErrnoException)?.code === 'EADDRINUSE' ||
      (err as NodeJS.ErrnoException)?.code === 'EACCES' ||
      (err as NodeJS.ErrnoException)?.code === 'EADDRNOTAVAIL'
    ) {
      io.stderr.write(`flowctl serve: cannot listen on ${host}:${port}: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    return reportError(io, err, { command: 'serve' });
  } finally {
    await running?.dispose();
  }
}
