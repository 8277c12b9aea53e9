import { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { cryptoIds, silentLogger, systemClock } from '../engine/defaults.js';
import { FlowError, isFlowError } from '../errors.js';
import { DEFAULT_MAX_BODY_BYTES, jsonDeeperThan, readBodyText } from '../http/body.js';
import type { Clock, IdSource, Logger } from '../ports/clock.js';
import type { Queue } from '../ports/queue.js';
import type { ServiceStorage } from '../ports/service-storage.js';
import type { Engine } from '../engine/types.js';
import type { ToolRegistry } from '../tools/types.js';
import { requireKey } from './auth/bearer.js';
import { createOAuthServer } from './oauth/server.js';
import { oauthRoutes } from './routes/oauth.js';
import { checkOrigin, requireOwner, requireSession } from './auth/guards.js';
import type { ServiceBindings, ServiceDeps, ServiceEnv } from './context.js';
import { invalidRequest, serviceError, serviceErrorBody, serviceErrorHeaders, serviceErrorResponse, type Issue } from './errors.js';
import { startScheduleLoop, type ScheduleLoop } from './domain/schedules.js';
import { createLimiters } from './rate-limits.js';
import { bodyIdleGuard } from './body-idle.js';
import type { ServiceRoute } from './route-table.js';
import { MAX_BODY_DEPTH, nulIssues, urlNulIssues } from './request-guards.js';
import { createSecretBox } from './secret-box.js';
import { auditRoutes } from './routes/audit.js';
import { authoringRoutes } from './routes/authoring.js';
import { automationRoutes } from './routes/automations.js';
import { exampleRoutes } from './routes/example.js';
import { executionRoutes } from './routes/executions.js';
import { gatewayRoutes } from './routes/gateway.js';
import { mcpRoutes } from './routes/mcp.js';
import { streamRoutes } from './routes/stream.js';
import { secretRoutes } from './routes/secrets.js';
import { authRoutes } from './routes/auth.js';
import { keyRoutes } from './routes/keys.js';
import { orgRoutes } from './routes/orgs.js';
import { scheduleRoutes } from './routes/schedules.js';
import { webhookRoutes } from './routes/webhooks.js';
import { startWebhookWorker } from './domain/webhooks.js';
import { resolveSettings, type HostedSettings } from './settings.js';
import { startRunWorker, type RunWorker } from './worker.js';
import { defaultWebRoot, reservedPrefixes, webAppHandler } from './web-app.js';
import { createLiveCapture, LIVE_PATH, type StudioOptions } from './studio/live.js';
import { createRunRegistry } from './live/run-registry.js';
import { createRunLive, RUN_LIVE_PATH, type RunLiveOptions } from './live/run-live.js';
import { withCaptureLock } from './studio/capture-lock.js';
import { webSocketAcceptor } from '../http/websocket.js';

/**
 * createHostedService(): the multi-tenant hosted service (spec/hosted-service.md, docs/hosted-api.md)
 * as a web-standard handler. A thin layer of routes and domain rules over injected storage; the
 * route table (`routes`) drives the app, the OpenAPI document and the tenancy tests.
 */

/** The starter example's page, which the shipped assembly also serves on its own listener. */
export { EXAMPLE_PAGE } from './routes/example.js';

export interface HostedServiceOptions {
  /** Service storage (createSqlServiceStorage over PGlite or Postgres). */
  storage: ServiceStorage;
  /** Default: the system clock. */
  clock?: Clock;
  /** Default: crypto uuid v4. */
  ids?: IdSource;
  /** Default: silent. */
  logger?: Logger;
  /** Settings; unset ones take the documented defaults (see settingsFromEnv for the environment). */
  settings?: Partial<HostedSettings>;
  /** The engine FlowSpecs are stored in and run by (createEngine over the engine storage). */
  engine?: Engine;
  /** Tools captures compile against: the built-ins, plus the browser tools when a browser is wired in. */
  tools?: ToolRegistry;
  /**
   * The run queue (createPgBossQueue from flowctl/adapters/queue-pgboss): needed for
   * `runDispatch: 'queue'` (SVC_RUN_DISPATCH=queue) and for `startWorker()`. It stays the caller's:
   * dispose() stops this service's workers, not the queue.
   */
  queue?: Queue;
  /** Whether dispose() disposes `storage`. Default true. */
  ownsStorage?: boolean;
  /**
   * Folder of the web app served at `/` (static files; index.html for client routes; never a path of
   * the API). Default: the package's built app (dist/web) when present. `false`: no web app.
   */
  web?: string | false;
  /**
   * The studio's live capture (`GET /api/authoring/{id}/live`, a WebSocket): its browser
   * (createStudioBrowser from flowctl/adapters/executor-playwright) and limits. Without it the
   * upgrade is answered 503 `not_ready` after the usual checks.
   */
  studio?: StudioOptions;
  /**
   * The run live view (`GET /api/automations/{id}/live`, a WebSocket): the frames of runs
   * (`createPlaywrightExecutor().screencast` of the executor the engine runs browser steps with) and
   * limits. Without it the upgrade is answered 503 `not_ready` after the usual checks.
   */
  runLive?: RunLiveOptions;
  /**
   * Where the starter example's demo page is served for runs: an origin of its own, never this
   * service's (runs may not reach the service's API; the hosted assembly serves it on a listener of
   * its own). Default `{publicUrl}/example/site`, which a run under the hosted egress guard cannot reach.
   */
  exampleSiteUrl?: string;
}

export interface HostedService {
  /** The web-standard handler. `env.incoming` (node-http) gives the client address. */
  fetch(request: Request, env?: ServiceBindings): Promise<Response>;
  /** The route table, for tests and tooling. */
  readonly routes: readonly ServiceRoute[];
  readonly settings: HostedSettings;
  /**
   * Execute queued runs in this process (`SVC_ROLE=worker` or `all`): takes messages of the run queue,
   * `concurrency` (default SVC_WORKER_CONCURRENCY) at a time, until stopped or disposed; and delivers
   * the org's webhooks.
   */
  startWorker(options?: { concurrency?: number }): Promise<RunWorker>;
  /** Stop the scheduler and workers (waiting for runs in flight, at most 30 s), then storage if owned. */
  /** The folder of the web app served at `/`, or undefined when none is served. */
  readonly webRoot: string | undefined;
  dispose(): Promise<void>;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/**
 * Logs the 503 `unavailable` answers of a database outage as one warning per 10 s (with the count
 * since the last one), not one line (or stack) per request.
 */
function outageLog(logger: Logger): (c: Context<ServiceEnv>, err: unknown) => void {
  let last = 0;
  let quiet = 0;
  return (c, err) => {
    const now = Date.now();
    if (now - last < 10_000) {
      quiet++;
      return;
    }
    const more = quiet > 0 ? ` (and ${quiet} more since the last report)` : '';
    last = now;
    quiet = 0;
    const reason = (err as Error)?.message ?? String(err);
    logger.warn(
      `[flowctl] [service] database unreachable: ${c.req.method} ${new URL(c.req.url).pathname} answered 503 unavailable${more}: ${reason.slice(0, 300)}`,
    );
  };
}

/**
 * Hono and its zod-openapi layer refuse some requests themselves with an HTTPException (a body
 * without a JSON Content-Type, malformed JSON): the same structured answers as the service's own.
 */
const HTTP_EXCEPTION_CODES: Readonly<Record<number, string>> = { 400: 'invalid_json', 413: 'body_too_large', 415: 'unsupported_media_type' };

/** Error answer through the context, so headers set earlier (a cleared cookie) go out with it. */
function respondError(c: Context<ServiceEnv>, thrown: unknown, logger: Logger, outage?: (c: Context<ServiceEnv>, err: unknown) => void): Response {
  const known = thrown instanceof HTTPException ? HTTP_EXCEPTION_CODES[thrown.status] : undefined;
  const err = known ? serviceError(known, (thrown as HTTPException).message || 'the request was refused') : thrown;
  const { status, body } = serviceErrorBody(err);
  // A database outage is a warning per 10 s; a 500 is a bug (a thrown value that is no FlowError, or a
  // code the status table lacks): logged, never sent.
  if (body.error === 'unavailable') outage?.(c, err);
  else if (status === 500) logger.error(`[flowctl] [service] ${c.req.method} ${new URL(c.req.url).pathname}: ${(err as Error)?.stack ?? String(err)}`);
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...serviceErrorHeaders(status, body) };
  const data = isFlowError(err) ? (err.data as { retry_after?: number; limit?: number } | undefined) : undefined;
  if (isFlowError(err, 'rate_limited') && data?.retry_after !== undefined) {
    headers['retry-after'] = String(data.retry_after);
    headers.ratelimit = `limit=${data.limit ?? 0}, remaining=0, reset=${data.retry_after}`;
  }
  const challenge = isFlowError(err) ? (err.data as { www_authenticate?: string } | undefined)?.www_authenticate : undefined;
  if (challenge) headers['www-authenticate'] = challenge;
  if (isFlowError(err, 'method_not_allowed') && (err.data as { allow?: string } | undefined)?.allow) headers.allow = (err.data as { allow: string }).allow;
  return c.body(JSON.stringify(body), status as 400, headers);
}

/**
 * Body rules of every route (docs/hosted-api.md, "Requests"): a body must be `application/json`
 * (415), at most 1 MiB (413), valid UTF-8 JSON nested at most MAX_BODY_DEPTH levels (400
 * `invalid_json`) and an object (400). The parsed
 * body is left in Hono's body cache for the route's schema validation.
 */
function bodyGuard(maxBytes: number): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    if (!BODY_METHODS.has(c.req.method)) return next();
    const type = c.req.header('content-type');
    const length = c.req.header('content-length');
    const hasBody = (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
    const cache = (c.req as unknown as { bodyCache: Record<string, unknown> }).bodyCache;
    const read = async () => {
      try {
        return await readBodyText(c.req.raw, maxBytes);
      } catch (err) {
        if (isFlowError(err, 'body_too_large')) throw serviceError('body_too_large', `the body is larger than ${maxBytes} bytes`);
        if (isFlowError(err, 'invalid_json')) throw serviceError('invalid_json', 'the body is not valid UTF-8');
        if (isFlowError(err, 'body_incomplete')) throw serviceError('invalid_json', 'the body was not received in full');
        throw err;
      }
    };
    if (type === undefined) {
      if (hasBody) throw serviceError('unsupported_media_type', 'send the body as application/json');
      // node:http always says when there is a body; a host that hands over a Request without
      // Content-Length or Transfer-Encoding may still carry one: read it (bounded) to know.
      if (c.req.raw.body === null) return next();
      if ((await read()) !== '') throw serviceError('unsupported_media_type', 'send the body as application/json');
      cache.text = Promise.resolve('');
      return next();
    }
    if (!JSON_TYPE.test(type)) throw serviceError('unsupported_media_type', 'send the body as application/json');
    const encoding = c.req.header('content-encoding');
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
      throw serviceError('unsupported_media_type', `Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported`);
    const text = await read();
    let parsed: unknown;
    if (text.trim() !== '') {
      if (jsonDeeperThan(text, MAX_BODY_DEPTH)) throw serviceError('invalid_json', `the body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`);
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw serviceError('invalid_json', `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw serviceError('invalid_json', 'the body must be a JSON object');
      const nul = nulIssues(parsed);
      if (nul.length > 0) throw invalidRequest(nul);
    }
    // Hand the body to the validators (Hono reads `bodyCache` before the raw request). Its json()
    // parses the cached text: with only a cached value it would serialize that value again first.
    cache.text = Promise.resolve(parsed === undefined ? '{}' : text);
    cache.json = Promise.resolve(parsed ?? {});
    c.set('body', parsed as Record<string, unknown> | undefined);
    return next();
  };
}

function issuesOf(error: { issues: { path: PropertyKey[]; message: string; code: string }[] }): Issue[] {
  return error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'number' ? p : String(p))), message: i.message, code: i.code }));
}

/** `/api/members/{userId}` -> a regex for 405 detection. */
function pathRegex(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}/?$`);
}

export function createHostedService(options: HostedServiceOptions): HostedService {
  const settings = resolveSettings(options.settings);
  const deps: ServiceDeps = {
    storage: options.storage,
    clock: options.clock ?? systemClock(),
    ids: options.ids ?? cryptoIds(),
    logger: options.logger ?? silentLogger(),
    settings,
    ...(options.engine ? { engine: options.engine } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    box: createSecretBox(settings.secretsKeys),
    limiters: createLimiters(settings, options.storage.rateLimitStore),
    ...(options.queue ? { queue: options.queue } : {}),
    liveRuns: createRunRegistry(),
    ...(options.exampleSiteUrl ? { exampleSiteUrl: options.exampleSiteUrl } : {}),
  } as Omit<ServiceDeps, 'oauth'> as ServiceDeps;
  deps.oauth = createOAuthServer(deps);
  if (settings.runDispatch === 'queue' && (!options.queue || !options.engine)) {
    throw new FlowError('invalid_settings', '[flowctl] [service] SVC_RUN_DISPATCH=queue needs a queue (createPgBossQueue) and an engine');
  }
  const { logger } = deps;

  const app = new OpenAPIHono<ServiceEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidRequest(issuesOf(result.error as never));
    },
  });
  const outage = outageLog(logger);
  app.onError((err, c) => respondError(c, err, logger, outage));

  const routes: ServiceRoute[] = [
    ...authRoutes(deps),
    ...orgRoutes(deps),
    ...keyRoutes(deps),
    ...auditRoutes(deps),
    ...exampleRoutes(deps),
    ...automationRoutes(deps),
    ...authoringRoutes(deps),
    ...secretRoutes(deps),
    ...executionRoutes(deps),
    ...streamRoutes(deps),
    ...gatewayRoutes(deps),
    ...mcpRoutes(deps),
    ...scheduleRoutes(deps),
    ...webhookRoutes(deps),
    ...oauthRoutes(deps),
  ];

  app.use('*', async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
  });
  // An upgrade anywhere but the live routes is refused before anything else looks at it.
  app.use('*', (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (!webSocketAcceptor(c.req.raw, c.env) || LIVE_PATH.test(path) || RUN_LIVE_PATH.test(path)) return next();
    throw serviceError('not_found', 'no WebSocket here (the WebSockets are /api/authoring/{id}/live and /api/automations/{id}/live)');
  });
  // A NUL in the path or query never names anything and cannot reach the database (request-guards.ts).
  const urlGuard: MiddlewareHandler<ServiceEnv> = async (c, next) => {
    const issues = urlNulIssues(new URL(c.req.url));
    if (issues.length > 0) throw invalidRequest(issues);
    return next();
  };
  // Every route: a body that stops arriving is closed after bodyIdleTimeoutMs (body-idle.ts).
  app.use('*', bodyIdleGuard(settings.bodyIdleTimeoutMs));
  for (const prefix of ['/api/*', '/v1/*', '/mcp', '/oauth/*']) app.use(prefix, urlGuard);
  // Cross-site before media type: a foreign Origin or Sec-Fetch-Site: cross-site on a write is 403
  // `forbidden` before its body or Content-Type is looked at (every /api write checks the same rule
  // again in its guard: requireSession, or the signup/login attempt).
  app.use('/api/*', (c, next) => {
    checkOrigin(c, deps);
    return next();
  });
  app.use('/api/*', bodyGuard(settings.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  // The consent page's JSON routes sit under the interaction's path (its cookie's): the /api rules.
  app.use('/oauth/interaction/*', (c, next) => {
    checkOrigin(c, deps);
    return next();
  });
  app.use('/oauth/interaction/*', bodyGuard(settings.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  // A capture edit waits for the studio's live append to the same capture in flight (and vice versa).
  app.use('/api/authoring/:id', (c, next) => (c.req.method === 'PATCH' ? withCaptureLock(c.req.param('id'), next) : next()));
  // So does attaching a file (it rewrites the session's file list, as a studio upload does).
  app.use('/api/authoring/:id/files/:name', (c, next) => (c.req.method === 'PUT' ? withCaptureLock(c.req.param('id'), next) : next()));
  const session = requireSession(deps);
  const owner = requireOwner();
  const bearer = requireKey(deps);
  // /mcp also takes an OAuth access token, and its 401 names the resource metadata (WWW-Authenticate).
  const mcpBearer = requireKey(deps, { oauth: true });
  // Authenticate before the body: the IP limit, the key, its org and the org limit come from the
  // headers, so a bad key is refused at once even while its body is still arriving (the route's own
  // bearer guard then sees the key already checked).
  app.use('/v1/run/:flow', (c, next) => (c.req.method === 'POST' ? bearer(c, next) : next()));
  app.use('/mcp', (c, next) => (c.req.method === 'POST' ? mcpBearer(c, next) : next()));
  // CORS preflights of browser-based OAuth clients: the provider answers them.
  app.options('/oauth/*', (c, next) => (c.req.path.startsWith('/oauth/interaction/') ? next() : deps.oauth.handle(c.req.raw)));
  app.use('/v1/*', bodyGuard(settings.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  for (const route of routes) {
    const auth =
      route.auth === 'session'
        ? [session]
        : route.auth === 'owner'
          ? [session, owner]
          : route.auth === 'bearer'
            ? [route.path === '/mcp' ? mcpBearer : bearer]
            : [];
    route.mount(app, auth);
  }

  // The WebSockets (the studio's, the run live view's) are ordinary routes: the runtime upgrades what
  // they accept (src/http/websocket.ts; node-http's injectWebSocket), a plain GET is told 426.
  const live = createLiveCapture(deps, options.studio);
  const runLive = createRunLive(deps, deps.liveRuns!, options.runLive);
  for (const path of ['/api/authoring/:id/live', '/api/authoring/:id/live/']) app.get(path, (c) => live.route.handle(c.req.raw, c.env));
  for (const path of ['/api/automations/:id/live', '/api/automations/:id/live/']) app.get(path, (c) => runLive.route.handle(c.req.raw, c.env));

  app.get('/healthz', (c) => c.json({ status: 'ok' }, 200));
  app.get('/readyz', async (c) =>
    (await options.storage.ready())
      ? c.json({ status: 'ready' }, 200)
      : c.json({ error: 'not_ready', message: 'the database is unreachable or not migrated' }, 503),
  );

  app.openAPIRegistry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'svc_session' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'http', scheme: 'bearer', description: '`svc_live_…` or `svc_test_…`' });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'flowctl hosted service', version: '1', description: 'See docs/hosted-api.md.' },
    servers: [{ url: settings.publicUrl }],
  });
  app.get('/docs', Scalar({ url: '/openapi.json', pageTitle: 'flowctl hosted API' }) as never);

  // The web app (src/service/web-app.ts): after every API route, never under an API prefix.
  const webRoot = options.web === undefined ? defaultWebRoot() : options.web || undefined;
  if (webRoot) app.get('*', webAppHandler(webRoot, reservedPrefixes(routes.map((r) => r.path))) as never);

  // Every other method on a known path is 405; anything else is 404, both structured.
  const known = [
    ...routes.map((r) => ({ re: pathRegex(r.path), method: r.method.toUpperCase() })),
    ...['/healthz', '/readyz', '/openapi.json', '/docs'].map((p) => ({ re: pathRegex(p), method: 'GET' })),
  ];
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = known.filter((k) => k.re.test(path)).map((k) => k.method);
    if (allowed.length > 0) {
      return respondError(
        c as never,
        new FlowError('method_not_allowed', `${c.req.method} is not allowed here; use ${allowed.join(', ')}`, { data: { allow: allowed.join(', ') } }),
        logger,
      );
    }
    return respondError(c as never, serviceError('not_found', 'no such route'), logger);
  });

  // The scheduler loop (docs/hosted-api.md, "Schedules"): in every process that has an engine;
  // claims in the database make each fire dispatch once however many run it.
  const scheduler: ScheduleLoop | undefined = settings.scheduler && deps.engine ? startScheduleLoop(deps) : undefined;
  if (scheduler) deps.scheduler = scheduler;

  const workers = new Set<RunWorker>();
  let disposed: Promise<void> | undefined;
  return {
    fetch: async (request, env) => {
      try {
        return await app.fetch(request, env ?? {});
      } catch (err) {
        // Hono answers everything itself; a throw here (a malformed URL) still gets a structured body.
        return serviceErrorResponse(isFlowError(err) ? err : serviceError('invalid_json', 'the request could not be read'));
      }
    },
    routes,
    settings,
    async startWorker(opts = {}) {
      if (disposed) throw new FlowError('service_disposed', '[flowctl] [service] the service was disposed');
      if (!deps.queue || !deps.engine) throw new FlowError('invalid_settings', '[flowctl] [service] a worker needs a queue (createPgBossQueue) and an engine');
      const runs = await startRunWorker(deps, opts);
      // The same process delivers the webhooks (docs/hosted-api.md, "Webhooks").
      const hooks = await startWebhookWorker(deps).catch(async (err: unknown) => {
        await runs.stop();
        throw err;
      });
      const worker: RunWorker = {
        stats: runs.stats,
        stop: async (o) => {
          workers.delete(worker);
          await Promise.all([runs.stop(o), hooks.stop(o)]);
        },
      };
      workers.add(worker);
      return worker;
    },
    webRoot,
    dispose() {
      disposed ??= (async () => {
        await live.dispose();
        await runLive.dispose();
        await Promise.all([...workers].map((w) => w.stop()));
        workers.clear();
        await scheduler?.stop();
        if (options.ownsStorage !== false) await options.storage.dispose();
      })();
      return disposed;
    },
  };
}
