import { PGlite } from '@electric-sql/pglite';
import { serveNodeHttp, type NodeHttpServer } from '../../adapters/node-http/index.js';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { createHostedService } from '../../src/service/hosted-service.js';
import type { PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { assembleHostedService, type HostedAssembly, type HostedAssemblyOptions } from '../../adapters/hosted/index.js';
import type { Engine } from '../../src/engine/types.js';
import type { HostedService } from '../../src/service/hosted-service.js';
import type { HostedSettings } from '../../src/service/settings.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import type { StudioBrowser } from '../../src/ports/studio.js';
import type { PgBossQueue } from '../../adapters/queue-pgboss/index.js';
import type { RunWorker } from '../../src/service/worker.js';
import { dropSchema } from './postgres.js';

/**
 * The hosted service as `npm start` builds it (assembleHostedService, flowctl/adapters/hosted), on
 * PGlite in memory (or a data folder), served on a loopback port, with a cookie-jar client per user.
 * A test changes settings and options, never the parts (engine, tool policy, egress guard, executor).
 */
export interface HostedFixture {
  url: string;
  service: HostedService;
  server: NodeHttpServer;
  pglite: PGlite;
  engine: Engine;
  /** The service storage the service runs on (for setting up states and independent reads). */
  storage: ServiceStorage;
  /** The pg-boss queue on the same PGlite, when the fixture was asked for one. */
  queue?: PgBossQueue;
  /** The Playwright executor of the browser tools (its screencast feeds the run live view). */
  executor: PlaywrightExecutor;
  /** The studio's browser (under the same egress guard as runs). */
  studio: StudioBrowser;
  /** The starter example's site, on its own origin. */
  exampleSiteUrl: string;
  assembly: HostedAssembly;
  close(): Promise<void>;
}

/**
 * The egress allowlist entry of tests whose fixture sites are served on 127.0.0.1 (SVC_EGRESS_ALLOW in
 * production names a company's private sites the same way). The service's own API stays refused: the
 * assembly puts its listeners on the egress denylist.
 */
export const FIXTURE_SITES: string[] = ['127.0.0.1'];

export interface HostedFixtureOptions {
  /** A pg-boss queue on the same PGlite, given to the service (queue dispatch, workers). Default false. */
  queue?: boolean;
  /** PGlite data folder (default: in memory). */
  dataDir?: string;
  /** Browser steps store a screenshot each (SVC_RUN_SCREENSHOTS). Default: the shipped default (on). */
  screenshots?: boolean;
}

/** Assembly options a test may set besides the settings (limits, the web app, and the injections it must explain). */
export type HostedExtra = Pick<HostedAssemblyOptions, 'studio' | 'runLive' | 'web' | 'logger' | 'clock' | 'ids' | 'screencast'>;

export async function startHosted(settings: Partial<HostedSettings> = {}, extra: HostedExtra = {}, fixture: HostedFixtureOptions = {}): Promise<HostedFixture> {
  const pglite = await PGlite.create(fixture.dataDir);
  let assembly: HostedAssembly;
  try {
    assembly = await assembleHostedService({
      // Fast auth limits and a fixed session secret (tests sign up many users from one address).
      settings: { sessionSecrets: ['s'.repeat(40)], authIpLimitPerMinute: 10_000, ...settings },
      database: { pglite },
      queue: fixture.queue ?? false,
      ...(fixture.screenshots !== undefined ? { screenshots: fixture.screenshots } : {}),
      ...extra,
    });
  } catch (err) {
    await pglite.close();
    throw err;
  }
  let closed: Promise<void> | undefined;
  return {
    url: assembly.url,
    service: assembly.service,
    server: assembly.server,
    pglite,
    engine: assembly.engine,
    storage: assembly.storage,
    ...(assembly.queue ? { queue: assembly.queue } : {}),
    executor: assembly.executor,
    studio: assembly.studio!,
    exampleSiteUrl: assembly.exampleSiteUrl!,
    assembly,
    close() {
      // Once: a test may close early (to read the data folder) and again in its cleanup.
      closed ??= assembly.close().then(() => pglite.close());
      return closed;
    },
  };
}

/**
 * createHostedService alone, with no engine and no browser: the library as an embedder without them
 * gets it, for the few tests of what it answers then (a prefilled draft for the starter example, 503
 * on the run live view). Never the shipped service: every other test uses startHosted.
 */
export async function startBareService(): Promise<{ url: string; close(): Promise<void> }> {
  const pglite = await PGlite.create();
  const engineStorage = createSqlStorage({ pglite });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  let service!: HostedService;
  const server = await serveNodeHttp({ fetch: (req, env) => service.fetch(req, env) }, { webSocket: true });
  service = createHostedService({ storage, settings: { sessionSecrets: ['s'.repeat(40)], authIpLimitPerMinute: 10_000, publicUrl: server.url } });
  return {
    url: server.url,
    async close() {
      await server.close();
      await service.dispose();
      await engineStorage.dispose();
      await pglite.close();
    },
  };
}

/**
 * Shipped assemblies on one Postgres schema, each with its own connection pool, as separate `npm
 * start` (SVC_ROLE=api) and `npm run worker` processes behind one balancer run. They share the session
 * and secrets keys given in the settings, as such processes must. `close` ends them and drops the
 * schema (and the queue's, which pg-boss keeps apart).
 */
export class PostgresAssemblies {
  private readonly started: HostedAssembly[] = [];
  private readonly workers: RunWorker[] = [];

  constructor(
    readonly dbUrl: string,
    readonly schema: string,
  ) {}

  /**
   * `count` API processes, one after the other: the first migrates the schema, the next find it
   * migrated. No queue, web app or scheduler: the tests using them start no run.
   */
  async apis(count: number, settings: Partial<HostedSettings>, poolSize = 4): Promise<HostedAssembly[]> {
    const apis: HostedAssembly[] = [];
    for (let i = 0; i < count; i++) {
      apis.push(
        await this.assemble({
          role: 'api',
          database: { databaseUrl: this.dbUrl, schema: this.schema, poolSize },
          queue: false,
          settings: { ...settings, scheduler: false },
          web: false,
        }),
      );
    }
    return apis;
  }

  /** An API process that queues runs and a worker process (one run at a time) that runs them. */
  async apiAndWorker(settings: Partial<HostedSettings>): Promise<{ api: HostedAssembly; worker: RunWorker }> {
    const database = { databaseUrl: this.dbUrl, schema: this.schema, poolSize: 4 };
    const api = await this.assemble({ role: 'api', settings: { ...settings, runDispatch: 'queue' }, database });
    const workerSide = await this.assemble({ role: 'worker', settings: { ...settings, runDispatch: 'queue', publicUrl: api.url }, database });
    const worker = await workerSide.service.startWorker({ concurrency: 1 });
    this.workers.push(worker);
    return { api, worker };
  }

  /** Workers first, then the processes, newest first; then the schemas. */
  async close(): Promise<void> {
    for (const w of this.workers.splice(0)) await w.stop();
    for (const a of this.started.splice(0).reverse()) await a.close();
    await dropSchema(this.dbUrl, this.schema);
    await dropSchema(this.dbUrl, `${this.schema}_pgboss`);
  }

  private async assemble(options: HostedAssemblyOptions): Promise<HostedAssembly> {
    const assembly = await assembleHostedService(options);
    this.started.push(assembly);
    return assembly;
  }
}

/** A client that keeps its own `svc_session` cookie, like a browser tab or curl -c/-b. */
export class Client {
  cookie: string | undefined;
  constructor(
    readonly base: string,
    readonly origin?: string,
  ) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const h: Record<string, string> = { ...headers };
    if (this.cookie !== undefined && h.cookie === undefined) h.cookie = `svc_session=${this.cookie}`;
    if (body !== undefined && h['content-type'] === undefined) h['content-type'] = 'application/json';
    if (this.origin) h.origin = this.origin;
    const res = await fetch(this.base + path, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    for (const c of res.headers.getSetCookie()) {
      const m = /^svc_session=([^;]*)/.exec(c);
      if (m) this.cookie = m[1] === '' ? undefined : m[1];
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* not JSON: the test asserts on it */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async signup(email: string, password = 'correct horse battery', org_name?: string) {
    const r = await this.call('POST', '/api/auth/signup', { email, password, ...(org_name ? { org_name } : {}) });
    if (r.status !== 201) throw new Error(`signup ${email}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { user: { id: string; email: string }; org: { id: string; name: string } };
  }

  /**
   * As an owner of org `orgId`: add `who` (signed up as `email`) with `role`, then switch `who`'s
   * session to that org, as a person accepting the invitation would.
   */
  async addMember(who: Client, email: string, orgId: string, role: 'member' | 'owner' = 'member'): Promise<void> {
    const added = await this.call('POST', '/api/members', { email, role });
    if (added.status !== 201) throw new Error(`add member ${email}: ${added.status} ${JSON.stringify(added.body)}`);
    const switched = await who.call('POST', '/api/session/org', { org_id: orgId });
    if (switched.status !== 200) throw new Error(`switch ${email} to org ${orgId}: ${switched.status} ${JSON.stringify(switched.body)}`);
  }
}
