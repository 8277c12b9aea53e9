import { Hono, type Context } from 'hono';
import { FlowError } from '../errors.js';
import { bearerMatches } from '../http/auth.js';
import { assertJsonBodyHeaders, DEFAULT_MAX_BODY_BYTES, readJsonBody } from '../http/body.js';
import { errorResponse, httpErrorInfo, jsonResponse, jsonTextResponse } from '../http/errors.js';
import { hostAllowed, hostHeaderName, originHostName } from '../http/host.js';
import { runJson } from '../run/run-json.js';
import type { Logger } from '../ports/clock.js';
import { createCatalog, type LauncherFlow, type LauncherFlowSource, type ServedFlow } from './launcher-catalog.js';
import { servedDigest } from '../engine/resolved-flow.js';
import { buildOpenApi } from './openapi.js';
import { compileBodyValidator, REPLAY_BODY_SCHEMA, RUN_ID_PATTERN } from './request-schemas.js';
import type { Engine } from '../engine/types.js';

export type { LauncherFlow, LauncherFlowSource, ServedFlow } from './launcher-catalog.js';
export { resolveFlow, type ResolvedFlow } from '../engine/resolved-flow.js';

export interface LauncherOptions {
  engine: Engine;
  /**
   * The flows to serve, by the caller's names (`{name, spec, digest?}`, e.g. from `resolveFlow`). A
   * list, or a resolver called per request. Runs go by digest; nothing is deployed.
   */
  flows: LauncherFlowSource;
  /** When set, every request must carry `Authorization: Bearer <token>` (compared in constant time), else 401. Default: none. */
  token?: string;
  /**
   * Without a token: the host names (no port) a request's `Host` (and a write's `Origin`) may name
   * besides loopback (`localhost`, 127.0.0.0/8, `::1`); anything else is 403, against DNS rebinding
   * and cross-site posts. `['*']` accepts every name (only behind a proxy that checks Host itself).
   * Ignored with a token, which guards every request. Default: none (loopback only).
   */
  allowedHosts?: readonly string[];
  /** Request body limit in bytes. Default 1 MiB (1048576). */
  maxBodyBytes?: number;
  /** Where unexpected (500) errors are logged. Default: silent. */
  logger?: Logger;
  /**
   * Accept any `secret:<name>` for a secret input in the body schema and its checks. Default false:
   * only the reference the flow declares. Set it with the engine's `allowSecretRefs` (which decides).
   */
  allowSecretRefs?: boolean;
}

/** A web-standard handler: mount it with adapters/node-http, adapters/express or adapters/hono. */
export interface Launcher {
  fetch(request: Request): Promise<Response>;
  /** Resolve the served flows and store their FlowSpecs (sorted by name); rejects when a flow cannot be stored. */
  flows(): Promise<ServedFlow[]>;
}

const validateReplayBody = compileBodyValidator(REPLAY_BODY_SCHEMA);

function methodNotAllowed(allow: string) {
  return () => jsonResponse(405, { error: 'method_not_allowed', message: `[flowctl] [launcher] method not allowed; use ${allow}` }, { allow });
}

/** Reads a route's JSON body: the framing checks (415) first, then size (413), UTF-8 and JSON (400). `undefined` when empty. */
async function readBody(request: Request, maxBodyBytes: number): Promise<unknown> {
  assertJsonBodyHeaders(request);
  return readJsonBody(request, maxBodyBytes);
}

function runId(c: Context): string {
  const id = c.req.param('id') ?? '';
  if (!RUN_ID_PATTERN.test(id)) throw new FlowError('invalid_run_id', `[flowctl] [launcher] run id must be a uuid, got "${id.slice(0, 80)}"`);
  return id;
}

/**
 * The REST launcher of spec/engine.md as one web-standard handler, routed with Hono. Routes, bodies,
 * statuses and error codes are documented in docs/rest.md.
 */
export function createLauncher(options: LauncherOptions): Launcher {
  const { engine, token, logger } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new FlowError('invalid_options', `[flowctl] [launcher] maxBodyBytes must be a non-negative integer, got ${maxBodyBytes}`);
  }
  if (token !== undefined && token.length === 0) throw new FlowError('invalid_options', '[flowctl] [launcher] token must not be empty');
  const allowedHosts = options.allowedHosts ?? [];
  if (!Array.isArray(allowedHosts) || allowedHosts.some((h) => typeof h !== 'string' || h === '')) {
    throw new FlowError('invalid_options', '[flowctl] [launcher] allowedHosts must be a list of host names');
  }
  if (Array.isArray(options.flows)) {
    // A fixed list is checked at once, so a bad list fails here and not on the first request.
    const names = new Set<string>();
    for (const f of options.flows as LauncherFlowSource & unknown[]) {
      const name = (f as { name?: unknown })?.name;
      if (typeof name !== 'string' || name === '' || !(f as { spec?: unknown }).spec) {
        throw new FlowError('invalid_flows', '[flowctl] [launcher] every served flow needs a name and a spec');
      }
      if (names.has(name)) throw new FlowError('duplicate_flow', `[flowctl] [launcher] two served flows are named "${name}"`);
      names.add(name);
      servedDigest(f as LauncherFlow, 'launcher');
    }
  } else if (typeof options.flows !== 'function') {
    throw new FlowError('invalid_flows', '[flowctl] [launcher] flows must be a list of {name, spec, digest?} or a function returning one');
  }
  const catalog = createCatalog(engine, options.flows, { allowSecretRefs: options.allowSecretRefs === true });
  const sorted = async () => [...(await catalog.all()).values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const app = new Hono();
  app.onError((err) => {
    if (httpErrorInfo(err).status >= 500) logger?.error('[flowctl] [launcher] request failed', { error: String((err as Error)?.stack ?? err) });
    return errorResponse(err);
  });
  app.notFound(() => jsonResponse(404, { error: 'not_found', message: '[flowctl] [launcher] no such route' }));

  // Who may call, checked before routing (docs/rest.md, "Authentication" and "Cross-site requests
  // and DNS rebinding"): with a token, the bearer token; without one, only the user's own machine.
  // A rebound name arrives as a foreign Host on every request; a cross-site post carries a foreign
  // Origin (or `null`). Host values seen and allowed are remembered (a server sees very few).
  const allowedHostValues = new Set<string>();
  const hostRefusal = `[flowctl] [launcher] this launcher has no token and answers only loopback Host names (localhost, 127.0.0.1, [::1])${allowedHosts.length > 0 ? ` and ${allowedHosts.join(', ')}` : ''}`;
  function refusal(request: Request): Response | undefined {
    const headers = request.headers;
    if (token !== undefined) {
      if (bearerMatches(headers.get('authorization'), token)) return undefined;
      return jsonResponse(
        401,
        { error: 'unauthorized', message: '[flowctl] [launcher] missing or wrong bearer token' },
        { 'www-authenticate': 'Bearer realm="flowctl"' },
      );
    }
    const header = headers.get('host');
    if (header === null || !allowedHostValues.has(header)) {
      const name = header === null ? new URL(request.url).hostname : hostHeaderName(header);
      if (name === undefined || !hostAllowed(name, allowedHosts)) return jsonResponse(403, { error: 'host_not_allowed', message: hostRefusal });
      if (header !== null && allowedHostValues.size < 64) allowedHostValues.add(header);
    }
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      const origin = headers.get('origin');
      const from = origin === null ? undefined : originHostName(origin);
      if (origin !== null && (from === undefined || !hostAllowed(from, allowedHosts))) {
        return jsonResponse(403, {
          error: 'origin_not_allowed',
          message: '[flowctl] [launcher] this launcher has no token and refuses writes from another site (Origin)',
        });
      }
    }
    return undefined;
  }

  app.get('/flows', async () => {
    const flows = (await sorted()).map((f) => ({
      name: f.name,
      digest: f.digest,
      ...(f.spec.description === undefined ? {} : { description: f.spec.description }),
      inputs: f.bodySchema,
      secret_inputs: f.secretInputs,
      runs_path: `/flows/${encodeURIComponent(f.name)}/runs`,
    }));
    return jsonResponse(200, { flows });
  });
  app.all('/flows', methodNotAllowed('GET, HEAD'));

  app.post('/flows/:name/runs', async (c) => {
    const name = c.req.param('name');
    const flow = (await catalog.all()).get(name);
    if (!flow) throw new FlowError('flow_not_found', `[flowctl] [launcher] no served flow named "${name}"`);
    const mode = c.req.query('mode') ?? 'sync';
    if (mode !== 'sync' && mode !== 'async') {
      throw new FlowError('invalid_mode', `[flowctl] [launcher] mode must be sync or async, got "${mode.slice(0, 40)}"`);
    }
    // Only an empty body means "no inputs"; JSON `null` is a body, and not an object (422).
    const read = await readBody(c.req.raw, maxBodyBytes);
    const body = read === undefined ? {} : read;
    const issues = flow.validate(body);
    if (issues.length > 0) {
      return jsonResponse(422, {
        error: 'invalid_inputs',
        message: `[flowctl] [launcher] inputs of ${name} violate its contract (${issues.length} issue${issues.length === 1 ? '' : 's'}); no run started`,
        issues,
      });
    }
    const inputs = body as Record<string, unknown>;
    // Run by the digest validated against: the name is only this launcher's, and the spec cannot move under the body.
    const target = { digest: flow.digest };
    if (mode === 'async') {
      const started = await engine.start(target, inputs);
      return jsonResponse(202, started, { location: `/runs/${started.run_id}` });
    }
    return jsonTextResponse(200, runJson(await engine.run(target, inputs)));
  });
  app.all('/flows/:name/runs', methodNotAllowed('POST'));

  app.get('/runs/:id', async (c) => {
    const id = runId(c);
    const run = await engine.getRun(id);
    if (!run) throw new FlowError('run_not_found', `[flowctl] [launcher] no run ${id}`);
    return jsonTextResponse(200, runJson(run));
  });
  app.all('/runs/:id', methodNotAllowed('GET, HEAD'));

  // Replay errors are `{code, message}` (spec/engine.md, "Errors"), unlike the other routes.
  app.post('/runs/:id/replay', async (c) => {
    try {
      const id = runId(c);
      const read = await readBody(c.req.raw, maxBodyBytes);
      const body = read === undefined ? {} : read;
      const issues = validateReplayBody(body);
      if (issues.length > 0) {
        const onMode = issues.every((i) => i.path === 'mode');
        throw new FlowError(
          onMode ? 'invalid_mode' : 'invalid_request',
          `[flowctl] [launcher] replay body: ${issues.map((i) => `${i.path || '(body)'} ${i.message}`).join('; ')}`,
          { data: { issues } },
        );
      }
      const mode = (body as { mode?: 'verify' | 'rerun' }).mode ?? 'verify';
      if (!(await engine.getRun(id))) throw new FlowError('run_not_found', `[flowctl] [launcher] no run ${id}`);
      // The HTTP request is the caller's consent: a rerun over REST does not ask before effects.
      return jsonTextResponse(200, runJson(await engine.replay({ run_id: id }, { mode })));
    } catch (err) {
      if (httpErrorInfo(err).status >= 500) logger?.error('[flowctl] [launcher] replay failed', { error: String((err as Error)?.stack ?? err) });
      return errorResponse(err, 'code');
    }
  });
  app.all('/runs/:id/replay', methodNotAllowed('POST'));

  app.get('/openapi.json', async () => jsonResponse(200, buildOpenApi(await sorted(), { bearer: token !== undefined, maxBodyBytes })));
  app.all('/openapi.json', methodNotAllowed('GET, HEAD'));

  return {
    fetch: async (request) => refusal(request) ?? app.fetch(request),
    flows: sorted,
  };
}
