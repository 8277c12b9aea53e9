import type { Context } from 'hono';
import type { Clock, IdSource, Logger } from '../ports/clock.js';
import type { ApiKeyRecord, OrgRecord, Role, ServiceStorage, SessionRecord } from '../ports/service-storage.js';
import type { Engine } from '../engine/types.js';
import type { Queue } from '../ports/queue.js';
import type { ToolRegistry } from '../tools/types.js';
import type { ScheduleLoop } from './domain/schedules.js';
import type { OAuthServer } from './oauth/server.js';
import type { RunRegistry } from './live/run-registry.js';
import type { ServiceLimiters } from './rate-limits.js';
import type { SecretBox } from './secret-box.js';
import type { HostedSettings } from './settings.js';
import type { WebSocketBindings } from '../http/websocket.js';

/** What every route handler of the hosted service is given. */
export interface ServiceDeps {
  storage: ServiceStorage;
  clock: Clock;
  ids: IdSource;
  logger: Logger;
  settings: HostedSettings;
  /** Runs and stores FlowSpecs by digest; publish needs it. */
  engine?: Engine;
  /** Tools FlowSpecs compile against (the built-ins, plus the browser tools when a browser is wired in). */
  tools?: ToolRegistry;
  /** Seals and opens the org secret store. */
  box: SecretBox;
  /** Rate limiters (src/service/rate-limits.ts): shared by every process on Postgres. */
  limiters: ServiceLimiters;
  /** The run queue (queue dispatch, workers). */
  queue?: Queue;
  /** The scheduler loop of this process, when it runs one (routes poke it after a change). */
  scheduler?: Pick<ScheduleLoop, 'poke'>;
  /** The sync runs in flight in this process, for the run live view (createHostedService makes one). */
  liveRuns?: RunRegistry;
  /** The OAuth server of the MCP endpoint (src/service/oauth/server.ts). */
  oauth: OAuthServer;
  /** Where the starter example's demo page is served (HostedServiceOptions.exampleSiteUrl). */
  exampleSiteUrl?: string;
}

/** The caller of a session-authenticated route. */
export interface SessionAuth {
  session: SessionRecord;
  user: { id: string; email: string };
  org: OrgRecord;
  role: Role;
  /** Every org of the user, with their role (from the same lookup). */
  orgs: { org: OrgRecord; role: Role }[];
}

/**
 * Node's request, when served by the node-http adapter (for the client address); on an upgrade
 * request of a host that upgrades, its WebSocket acceptor (src/http/websocket.ts).
 */
export interface ServiceBindings extends WebSocketBindings {
  incoming?: { socket?: { remoteAddress?: string; encrypted?: boolean } };
}

export interface ServiceEnv {
  Bindings: ServiceBindings;
  Variables: {
    auth: SessionAuth;
    /** The parsed JSON body (object), when the request carried one. */
    body: Record<string, unknown> | undefined;
    /** The caller of a bearer route: its key and org. */
    key: { record: ApiKeyRecord; org: OrgRecord };
  };
}

export type ServiceContext = Context<ServiceEnv>;
