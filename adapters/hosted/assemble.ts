import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../src/engine/defaults.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Engine } from '../../src/engine/types.js';
import type { Clock, IdSource, Logger } from '../../src/ports/clock.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import { createHostedService, EXAMPLE_PAGE, type HostedService, type HostedServiceOptions } from '../../src/service/hosted-service.js';
import { resolveSettings, type HostedSettings } from '../../src/service/settings.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createEgressGuard } from '../../src/tools/egress.js';
import { hostedToolPolicy } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../executor-playwright/executor.js';
import { createStudioBrowser } from '../executor-playwright/studio/studio-browser.js';
import type { StudioBrowser } from '../../src/ports/studio.js';
import { serveNodeHttp, type NodeHttpServer } from '../node-http/index.js';
import { createPgBossQueue, type PgBossQueue } from '../queue-pgboss/index.js';
import { createSqlServiceStorage } from '../storage-sql/service/service-storage.js';
import { createSqlStorage, type SqlStorage, type SqlStorageOptions } from '../storage-sql/sql-storage.js';

/**
 * assembleHostedService(): the hosted service exactly as `npm start` and `npm run worker` run it
 * (docs/deploy.md, "One assembly"): SQL storage, the engine under `hostedToolPolicy` (no `spawn` or
 * `fs`, the egress guard with SVC_EGRESS_ALLOW, the service's own listeners denied), the Playwright
 * executor (screenshots per SVC_RUN_SCREENSHOTS), the studio browser under the same egress guard, the
 * pg-boss queue, the scheduler (a setting), the run live view, and the starter example's site on an
 * origin of its own. Tests build the service with this function too: they change options, never the
 * parts.
 */

export type HostedRole = 'all' | 'api' | 'worker';

export interface HostedAssemblyOptions {
  /** Settings of the service (settingsFromEnv for the environment). `publicUrl` defaults to the bound URL. */
  settings?: Partial<HostedSettings>;
  /** `all` (default): one process does everything; `api`: the API (and scheduler); `worker`: probes only. */
  role?: HostedRole;
  /** The database: createSqlStorage options (`databaseUrl`, or `pglite` as a data folder or an instance). */
  database: SqlStorageOptions;
  /** Where the API listens. Default 127.0.0.1, an ephemeral port. */
  listen?: { port?: number; host?: string };
  /**
   * The starter example's site, on an origin of its own (never the API's: runs may not reach the
   * API). `port` default 0 (ephemeral; `npm start` uses PORT+1), `host` default the API's host. A
   * worker serves none and allows `url` (default `http://host:port`), where the API process serves it.
   */
  exampleSite?: { port?: number; host?: string; url?: string };
  /** A JPEG after every successful browser step (SVC_RUN_SCREENSHOTS). Default true. */
  screenshots?: boolean;
  /** Run browser steps on a Chromium reached over CDP (SVC_BROWSER_CDP_URL) instead of launching one. */
  browserCdpUrl?: string;
  /**
   * The warm pool (SVC_BROWSER_WARM_CONTEXTS, docs/browser.md "Warm pool"): fresh contexts, each with
   * its egress proxy, kept ready for the next runs; the browser starts with the service. 0: none, the
   * browser starts on the first browser step. Default 2. A process that executes no runs (`api` with
   * queue dispatch) keeps none.
   */
  warmContexts?: number;
  /** The pg-boss queue (queued runs, webhook deliveries). Default true. */
  queue?: boolean;
  /** Studio limits (the browser is the assembly's). */
  studio?: Omit<NonNullable<HostedServiceOptions['studio']>, 'browser'>;
  /** Run live view limits (the frames are the executor's). */
  runLive?: Omit<NonNullable<HostedServiceOptions['runLive']>, 'screencast'>;
  /** Folder of the web app, or false for none. Default: the built app when present. */
  web?: string | false;
  logger?: Logger;
  /** Injected only by tests that need a controlled clock or ids (say why at the call site). */
  clock?: Clock;
  ids?: IdSource;
  /** Injected only by tests of the live sockets that need no real frames (say why at the call site). */
  screencast?: NonNullable<HostedServiceOptions['runLive']>['screencast'];
}

export interface HostedAssembly {
  /** The API's URL (`http://host:port` as bound). */
  url: string;
  role: HostedRole;
  service: HostedService;
  server: NodeHttpServer;
  engine: Engine;
  engineStorage: SqlStorage;
  storage: ServiceStorage;
  executor: PlaywrightExecutor;
  studio: StudioBrowser | undefined;
  queue: PgBossQueue | undefined;
  /** The starter example's site (`http://host:port/`), served by this process unless it is a worker (which knows it only when its port or URL is given). */
  exampleSiteUrl: string | undefined;
  /** The egress allowlist and denylist runs and the studio are under. */
  egress: { allow: string[]; deny: string[] };
  /** Close the listeners, stop the service's workers and the queue, the browsers, then storage. */
  close(): Promise<void>;
}

const hostPort = (url: URL): string => `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
const urlHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** The destinations that are this service itself: the API's bound address and public URL. */
function selfDestinations(bound: { host: string; port: number }, publicUrl: string | undefined): string[] {
  const out = new Set<string>();
  const { host, port } = bound;
  if (host === '0.0.0.0' || host === '::' || host === '127.0.0.1' || host === '::1' || host === 'localhost') {
    for (const h of ['127.0.0.1', '[::1]', 'localhost']) out.add(`${h}:${port}`);
  } else {
    out.add(`${urlHost(host)}:${port}`);
  }
  if (publicUrl) {
    try {
      out.add(hostPort(new URL(publicUrl)));
    } catch {
      // An invalid SVC_PUBLIC_URL is refused with its own message by resolveSettings.
    }
  }
  return [...out];
}

/** A listener serving only the starter example's demo page (GET /, and 404 for the rest). */
async function serveExampleSite(host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && (path === '/' || path === '/index.html')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : EXAMPLE_PAGE);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return { server, url: `http://${urlHost(host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host)}:${bound.port}/` };
}

export async function assembleHostedService(options: HostedAssemblyOptions): Promise<HostedAssembly> {
  const role = options.role ?? 'all';
  const logger = options.logger ?? silentLogger();
  const host = options.listen?.host ?? '127.0.0.1';
  // Settings are checked before anything starts (a bad SVC_EGRESS_ALLOW fails here).
  resolveSettings({ ...options.settings, publicUrl: options.settings?.publicUrl ?? 'http://127.0.0.1' });

  const engineStorage = createSqlStorage(options.database);
  const storage = createSqlServiceStorage(engineStorage);
  const closers: (() => Promise<unknown>)[] = [() => engineStorage.dispose()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  };
  try {
    await storage.init();
    const queue = options.queue === false ? undefined : createPgBossQueue({ storage: engineStorage, logger });
    if (queue) closers.push(() => queue.stop());

    // Bind first: a second instance on a busy port fails here, before it changes anything. A worker
    // answers only the probes (liveness; readiness: the database reachable and migrated).
    let service: HostedService | undefined;
    const probes = async (req: Request): Promise<Response> => {
      const path = new URL(req.url).pathname;
      if (path === '/healthz') return Response.json({ status: 'ok', role });
      if (path === '/readyz')
        return (await storage.ready())
          ? Response.json({ status: 'ready', role })
          : Response.json({ error: 'not_ready', message: 'the database is unreachable or not migrated' }, { status: 503 });
      return Response.json({ error: 'not_found', message: 'a worker process answers only /healthz and /readyz' }, { status: 404 });
    };
    const server = await serveNodeHttp(
      {
        fetch: (req, env) => (role === 'worker' || !service ? probes(req) : service.fetch(req, env)),
      },
      // The studio's live capture and the run live view (WebSockets); a worker has none: its upgrade
      // requests are plain requests, which it answers 404 like any path but the probes.
      { port: options.listen?.port ?? 0, host, webSocket: role !== 'worker' },
    );
    const serverCloser = () => server.close();
    closers.push(serverCloser);
    const settings: Partial<HostedSettings> = { ...options.settings, publicUrl: options.settings?.publicUrl ?? server.url };
    if (role === 'worker') settings.scheduler = false;

    // The starter example's site: its own listener, so the allowance runs need for it is exactly that
    // origin, never the API's (docs/hosted-api.md, "Starter example").
    let exampleSiteUrl: string | undefined;
    if (role === 'worker') {
      // A worker allows the origin the API processes serve it on (known when its port is fixed).
      const port = options.exampleSite?.port ?? 0;
      exampleSiteUrl = options.exampleSite?.url ?? (port > 0 ? `http://${urlHost(options.exampleSite?.host ?? host)}:${port}/` : undefined);
    } else {
      const site = await serveExampleSite(options.exampleSite?.host ?? host, options.exampleSite?.port ?? 0);
      closers.push(() => new Promise<void>((resolve) => site.server.close(() => resolve())).then(() => site.server.closeAllConnections()));
      exampleSiteUrl = options.exampleSite?.url ?? site.url;
    }

    // Every run and studio session is under the egress guard: SVC_EGRESS_ALLOW and the example's
    // origin allowed; this service's own API denied even where the allowlist covers it.
    const egress = {
      allow: [...(settings.egressAllow ?? []), ...(exampleSiteUrl ? [hostPort(new URL(exampleSiteUrl))] : [])],
      deny: selfDestinations({ host, port: server.port }, settings.publicUrl),
    };
    const executesRuns = role !== 'api' || settings.runDispatch !== 'queue';
    const warmContexts = executesRuns ? (options.warmContexts ?? 2) : 0;
    const executor = createPlaywrightExecutor({
      screenshots: options.screenshots ?? true,
      warmContexts,
      ...(options.browserCdpUrl ? { cdpEndpoint: options.browserCdpUrl } : {}),
    });
    closers.push(() => executor.dispose());
    // Every run here is under the egress guard: the warm contexts come with their (unbound) proxies.
    if (warmContexts > 0) executor.warmUp({ guarded: true });
    const studio = role === 'worker' ? undefined : createStudioBrowser({ egress: createEgressGuard(egress) });
    if (studio) closers.push(() => studio.dispose());
    const tools = createToolRegistry(builtinTools(), executor.tools);
    // recoverDeadPids: a run whose executing process on this host is gone is recovered at once
    // (worker_lost) instead of after its lease.
    const engine = createEngine({
      storage: engineStorage,
      tools,
      logger,
      recoverDeadPids: true,
      toolPolicy: hostedToolPolicy(egress),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    service = createHostedService({
      storage,
      engine,
      tools,
      settings,
      logger,
      ...(exampleSiteUrl ? { exampleSiteUrl } : {}),
      ...(queue ? { queue } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.ids ? { ids: options.ids } : {}),
      ...(options.web !== undefined ? { web: options.web } : {}),
      ...(studio ? { studio: { ...options.studio, browser: studio } } : {}),
      // The run live view relays the screencast of the runs this process executes synchronously.
      ...(role === 'worker' ? {} : { runLive: { ...options.runLive, screencast: options.screencast ?? executor.screencast } }),
    });
    const built = service;
    let closed: Promise<void> | undefined;
    return {
      url: server.url,
      role,
      service: built,
      server,
      engine,
      engineStorage,
      storage,
      executor,
      studio,
      queue,
      exampleSiteUrl,
      egress,
      close() {
        // The API first (no new requests), then the service (scheduler and workers stop, waiting at
        // most 30 s for runs in flight), then the rest in reverse order of creation.
        closed ??= (async () => {
          await server.close();
          closers.splice(closers.indexOf(serverCloser), 1);
          await built.dispose();
          await closeAll();
        })();
        return closed;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
