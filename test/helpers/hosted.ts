import { PGlite } from '@electric-sql/pglite';
import { serveNodeHttp, type NodeHttpServer } from '../../adapters/node-http/index.js';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { createHostedService, type HostedService, type HostedServiceOptions } from '../../src/service/hosted-service.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { HostedSettings } from '../../src/service/settings.js';
import type { ToolPolicy } from '../../src/tools/policy.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import { createPgBossQueue, type PgBossQueue } from '../../adapters/queue-pgboss/index.js';

/**
 * A hosted service on in-memory PGlite, served on a loopback port, with a cookie-jar client per
 * user. Password hashing runs at cheap parameters only where a test asks (never in production code).
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
  /** The Playwright executor of the browser tools (its screencast feeds the run live view), when `browser`. */
  executor?: PlaywrightExecutor;
  close(): Promise<void>;
}

export interface HostedFixtureOptions {
  /** Wire browser tools in (publishing browser captures needs their contracts; no browser starts until a step runs). */
  browser?: boolean;
  /** A pg-boss queue on the same PGlite, given to the service (queue dispatch, workers). */
  queue?: boolean;
  /** PGlite data folder (default: in memory). */
  dataDir?: string;
  /** Browser steps store a screenshot each (the executor's `screenshots`). Default false. */
  screenshots?: boolean;
  /** The engine's tool policy (as `npm start` runs under `hostedToolPolicy()`). Default: none. */
  toolPolicy?: ToolPolicy;
}

export async function startHosted(
  settings: Partial<HostedSettings> = {},
  extra: Partial<HostedServiceOptions> = {},
  fixture: HostedFixtureOptions = { browser: true },
): Promise<HostedFixture> {
  const pglite = await PGlite.create(fixture.dataDir);
  const engineStorage = createSqlStorage({ pglite });
  const browser: PlaywrightExecutor | undefined = fixture.browser ? createPlaywrightExecutor(fixture.screenshots ? { screenshots: true } : {}) : undefined;
  const tools = createToolRegistry(builtinTools(), browser?.tools ?? []);
  const engine = createEngine({ storage: engineStorage, tools, ...(fixture.toolPolicy ? { toolPolicy: fixture.toolPolicy } : {}) });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const queue = fixture.queue ? createPgBossQueue({ storage: engineStorage }) : undefined;
  let service!: HostedService;
  const server = await serveNodeHttp({ fetch: (req, env) => service.fetch(req, env), upgrade: (req, socket, head) => service.upgrade(req, socket, head) });
  service = createHostedService({
    storage,
    engine,
    tools,
    settings: { sessionSecrets: ['s'.repeat(40)], authIpLimitPerMinute: 10_000, publicUrl: server.url, ...settings },
    ...(queue ? { queue } : {}),
    // The run live view relays the executor's screencast (as npm start wires it).
    ...(browser ? { runLive: { screencast: browser.screencast } } : {}),
    ...extra,
  });
  return {
    url: server.url,
    service,
    server,
    pglite,
    engine,
    storage,
    ...(queue ? { queue } : {}),
    ...(browser ? { executor: browser } : {}),
    async close() {
      await server.close();
      await service.dispose();
      await queue?.stop();
      await browser?.dispose();
      await engineStorage.dispose();
      await pglite.close();
    },
  };
}

/** A client that keeps its own `svc_session` cookie, like a browser tab or curl -c/-b. */
export class Client {
  cookie: string | undefined;
  constructor(readonly base: string, readonly origin?: string) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const h: Record<string, string> = { ...headers };
    if (this.cookie !== undefined && h.cookie === undefined) h.cookie = `svc_session=${this.cookie}`;
    if (body !== undefined && h['content-type'] === undefined) h['content-type'] = 'application/json';
    if (this.origin) h.origin = this.origin;
    const res = await fetch(this.base + path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
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
