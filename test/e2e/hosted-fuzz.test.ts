import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_STATUS_BY_CODE } from '../../src/service/errors.js';
import type { ServiceRoute } from '../../src/service/route-table.js';
import { isReservedPath, reservedPrefixes } from '../../src/service/web-app.js';
import type { JsonSchema } from '../helpers/fuzz-arbitraries.js';
import { B, B_PRIVATE, credHeaders, exchange, heal, ownerA, ownerB, setupOrgs, snapshotB, type Answer } from '../helpers/fuzz-orgs.js';
import { gatewayArb, mcpArb, offTableArb, routeArb, type OpenApiOp, type Req } from '../helpers/fuzz-requests.js';
import { startHosted, type HostedFixture } from '../helpers/hosted.js';
import { testSeed } from '../helpers/seeded.js';

/**
 * The hosted API under a seeded fast-check fuzz (issue 19; docs/hosted-api.md, "Security tests"):
 * every route of the route table (a new route is fuzzed without touching this file), plus the run
 * gateway's bodies, MCP JSON-RPC messages and requests off the table, at least TOTAL requests in
 * all, in process (`service.fetch`, PGlite in memory). Org A attacks with its own sessions and keys
 * (and forged ones of B); org B is the victim, whose ids are path parameters and body values.
 *
 * Every answer: no 5xx; an error is `{error, message}` (`{error: "invalid_request", issues}` for a
 * schema failure) with a code of SERVICE_STATUS_BY_CODE at that code's status; no byte of B's
 * private data. After each route's share, B's data read through B's own API (and its sealed secrets
 * through storage) is exactly what it was before.
 *
 * The seed is fixed (FLOWCTL_TEST_SEED replaces it); a failure prints the request that caused it, and
 * FLOWCTL_FUZZ_ONLY=<part of a category name> runs that category alone, with the same sequence. The
 * two orgs are test/helpers/fuzz-orgs.ts, the request generators test/helpers/fuzz-requests.ts.
 */

const SEED = testSeed(0x19_f0_22);
const TOTAL = 10_000;

let h: HostedFixture;
let base: string;

// ---------------------------------------------------------------------------------------------
// The checks

const counts = new Map<string, number>();
let sent = 0;
let sinceHeal = 0;
let dirty = false;
const statuses = new Map<number, number>();
const statusesOf = new Map<string, Map<number, number>>();

function describeReq(r: Req): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : `<${r.body.byteLength} bytes>`;
  return `${r.method} ${r.path.slice(0, 200)}${r.query.length ? `?${new URLSearchParams(r.query).toString().slice(0, 200)}` : ''} as ${r.cred}, content-type ${r.contentType ?? '(none)'}, headers ${JSON.stringify(r.extraHeaders)}, body ${body.slice(0, 300)}${body.length > 300 ? `... (${body.length})` : ''}`;
}

function checkJsonRpc(value: unknown, what: string): void {
  const one = (m: any) => {
    expect(m?.jsonrpc, what).toBe('2.0');
    if (m.error !== undefined) {
      expect(typeof m.error.code, what).toBe('number');
      expect(typeof m.error.message, what).toBe('string');
    } else {
      expect(m.result, what).toBeDefined();
    }
  };
  if (Array.isArray(value)) value.forEach(one);
  else one(value);
}

/** Routes answered by the OAuth server library (docs/hosted-api.md, "OAuth"), not the consent page's. */
const OAUTH_PROTOCOL = /^\/oauth\/(?!interaction\/)|^\/\.well-known\/openid-configuration$/;

function checkAnswer(r: Req, routePath: string | undefined, a: Answer): void {
  const what = `${describeReq(r)} -> ${a.status} ${a.text.slice(0, 400)}`;
  expect(a.status, what).toBeLessThan(500);
  expect(a.headers.get('x-content-type-options'), what).toBe('nosniff');
  const all = a.text + JSON.stringify([...a.headers]);
  for (const s of B_PRIVATE) expect(all.includes(s), `${what}: carries B's "${s.slice(0, 20)}"`).toBe(false);
  if (r.method === 'HEAD' || a.status === 204 || a.status === 202) return;
  // Redirects of the OAuth flow (authorization to the consent page, back to the client).
  if (a.status >= 300 && a.status < 400 && routePath !== undefined && /^\/oauth\//.test(routePath)) return expect(a.headers.get('location'), what).toBeTruthy();
  const type = a.headers.get('content-type') ?? '';
  // Successful answers that are not JSON: the demo page of the starter example, the API reference
  // page, and event streams.
  // Outside the API's prefixes (a path like /api/%2e%2e/keys is /keys once the URL is parsed) the web
  // app answers with its pages.
  const effective = new URL(base + r.path).pathname;
  const webApp = !isReservedPath(effective, reservedPrefixes(h.service.routes.map((x) => x.path)));
  if (a.status < 300 && (routePath === '/example/site' || /^\/docs\/?$/.test(effective) || webApp)) return expect(type, what).toMatch(/^text\/html/);
  if (a.status < 300 && type.startsWith('text/event-stream')) {
    expect(routePath === '/mcp' || routePath === '/api/runs/{id}/stream', what).toBe(true);
    for (const line of a.text.split('\n')) if (line.startsWith('data: ')) JSON.parse(line.slice(6));
    return;
  }
  // The authorization server's own endpoints answer as their RFCs define: JSON media types of their
  // own (the key set is application/jwk-set+json), OAuth errors as `{error, error_description}`
  // (RFC 6749 section 5.2), which OAuth clients parse.
  if (routePath !== undefined && OAUTH_PROTOCOL.test(routePath)) {
    expect(type, what).toMatch(/^application\/([\w.-]+\+)?json/);
    const answer = JSON.parse(a.text);
    if (a.status >= 300) expect(typeof answer.error, what).toBe('string');
    return;
  }
  expect(type, what).toMatch(/^application\/json/);
  const body = JSON.parse(a.text);
  if (routePath === '/mcp' && typeof body === 'object' && body !== null && ('jsonrpc' in body || Array.isArray(body))) return checkJsonRpc(body, what);
  if (a.status < 300) return;
  expect(typeof body.error, what).toBe('string');
  expect(Object.keys(SERVICE_STATUS_BY_CODE), what).toContain(body.error);
  expect(SERVICE_STATUS_BY_CODE[body.error], `${what}: status of ${body.error}`).toBe(a.status);
  if (body.error === 'invalid_request') {
    expect(Array.isArray(body.issues), what).toBe(true);
    for (const i of body.issues) {
      expect(Array.isArray(i.path) && typeof i.message === 'string' && typeof i.code === 'string', what).toBe(true);
    }
  } else {
    expect(typeof body.message, what).toBe('string');
    expect(Object.keys(body).sort(), what).toEqual(['error', 'message']);
  }
  if (a.status === 405) expect(a.headers.get('allow'), what).toBeTruthy();
}

async function send(category: string, routePath: string | undefined, r: Req): Promise<void> {
  const { headers, user } = credHeaders(r.cred);
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  Object.assign(headers, r.extraHeaders);
  const qs = r.query.length ? `?${new URLSearchParams(r.query).toString()}` : '';
  const a = await exchange(r.method, r.path + qs, headers, r.body);
  sent++;
  counts.set(category, (counts.get(category) ?? 0) + 1);
  statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const mine = statusesOf.get(category) ?? new Map<number, number>();
  statusesOf.set(category, mine.set(a.status, (mine.get(a.status) ?? 0) + 1));
  if (user && a.headers.getSetCookie().some((c) => c.startsWith('svc_session='))) {
    // Signup and login start a session of whoever they name (maybe a new user): A keeps its own.
    if (!/^\/api\/auth\/(signup|login)/.test(r.path)) user.take(a.headers);
    dirty = true;
  }
  checkAnswer(r, routePath, a);
  // Repair A after a session change at once, else every 20 requests (a write may have changed A).
  if (++sinceHeal >= 20 || dirty) {
    await heal();
    sinceHeal = 0;
    dirty = false;
  }
}

/** A stable per-category seed, so adding a route does not move the others' sequences. */
function seedOf(category: string): number {
  let x = SEED ^ 0x811c9dc5;
  for (const ch of category) x = Math.imul(x ^ ch.charCodeAt(0), 0x01000193);
  return x >>> 0;
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  h = await startHosted(
    // Limits out of the way (a 429 would hide the routes behind it); no scheduler (no fires of A's
    // fuzzed schedules during the run); no queue (no webhook deliveries leave the process).
    {
      ipLimitPerMinute: 10_000_000,
      orgLimitPerMinute: 10_000_000,
      authIpLimitPerMinute: 10_000_000,
      authAccountFailuresPer15Min: 10_000_000,
      authIpFailuresPer15Min: 10_000_000,
      scheduler: false,
    },
  );
  base = h.url;
  await setupOrgs(h);
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe('hosted API fuzz (fast-check, in process)', () => {
  it(`at least ${TOTAL} generated requests over every route: no 5xx, structured errors, B unchanged`, async () => {
    const doc = JSON.parse((await exchange('GET', '/openapi.json', {})).text) as {
      paths: Record<string, Record<string, OpenApiOp>>;
      components: { schemas: Record<string, JsonSchema> };
    };
    const routes = h.service.routes;
    const categories: { name: string; routePath: string | undefined; arb: fc.Arbitrary<Req> }[] = [
      ...routes.map((route) => ({
        name: `${route.method.toUpperCase()} ${route.path}`,
        routePath: route.path,
        arb: routeArb(route, doc.paths[route.path]?.[route.method], doc.components.schemas),
      })),
      { name: 'gateway bodies', routePath: '/v1/run/{flow}', arb: gatewayArb() },
      { name: 'MCP JSON-RPC', routePath: '/mcp', arb: mcpArb() },
      { name: 'off the table', routePath: undefined, arb: offTableArb(routes) },
    ];
    const numRuns = Math.ceil(TOTAL / categories.length);
    // FLOWCTL_FUZZ_ONLY=<part of a category name> replays one category (its seed does not depend on the others).
    const only = process.env.FLOWCTL_FUZZ_ONLY;
    if (only) categories.splice(0, categories.length, ...categories.filter((c) => c.name.includes(only)));
    process.stdout.write(`[fuzz] seed ${SEED} (FLOWCTL_TEST_SEED replaces it), ${categories.length} categories x ${numRuns} requests\n`);
    const before = JSON.stringify(await snapshotB());
    const known = (p: string) => routes.some((r) => r.path === p);
    const started = Date.now();
    const seconds = new Map<string, number>();
    for (const c of categories) {
      const t0 = Date.now();
      await fc.assert(
        fc.asyncProperty(c.arb, async (r) => send(c.name, c.routePath && known(c.routePath) ? c.routePath : matchRoute(routes, r.path), r)),
        {
          seed: seedOf(c.name),
          numRuns,
          endOnFailure: true,
          // The failing request is in the error (bodies cut short); fast-check's own report would print it whole.
          reporter: (out) => {
            if (out.failed)
              throw new Error(
                `"${c.name}" failed at run ${out.numRuns} (seed ${out.seed}, path ${out.counterexamplePath}): ${(out.errorInstance as Error | undefined)?.message ?? String(out.errorInstance)}`,
              );
          },
        },
      );
      seconds.set(c.name, (Date.now() - t0) / 1000);
      await heal();
      const after = JSON.stringify(await snapshotB());
      expect(after === before, `org B's data changed during "${c.name}"`).toBe(true);
    }
    const histogram = (m: Map<number, number> | undefined) =>
      [...(m ?? [])]
        .sort((x, y) => x[0] - y[0])
        .map(([st, n]) => `${st}:${n}`)
        .join(' ');
    const lines = [...counts].map(
      ([k, v]) => `  ${String(v).padStart(5)}  ${k.padEnd(40)} ${`${seconds.get(k)?.toFixed(1)} s`.padStart(7)}  ${histogram(statusesOf.get(k))}`,
    );
    process.stdout.write(
      `[fuzz] ${sent} requests in ${((Date.now() - started) / 1000).toFixed(0)} s, seed ${SEED}\n${lines.join('\n')}\n[fuzz] statuses ${histogram(statuses)}\n`,
    );
    if (!only) expect(sent).toBeGreaterThanOrEqual(TOTAL);
    for (const c of categories) expect([c.name, counts.get(c.name)]).toEqual([c.name, numRuns]);
    // B still works: its key runs its automation, its audit chain verifies.
    const run = await exchange('POST', '/v1/run/b-flow', { authorization: `Bearer ${B.key}` });
    expect(JSON.parse(run.text).status).toBe('succeeded');
    expect((await ownerB.ok('GET', '/api/audit/verify')).ok).toBe(true);
    // A's own org went through the storm too: its audit chain still verifies.
    await heal();
    expect((await ownerA.ok('GET', '/api/audit/verify')).ok).toBe(true);
  }, 900_000);
});

/** The route-table path a concrete path falls under (for the checks that depend on the route). */
function matchRoute(routes: readonly ServiceRoute[], path: string): string | undefined {
  const clean = path.split('?')[0]!;
  return routes.find((r) => new RegExp(`^${r.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(clean))?.path;
}
