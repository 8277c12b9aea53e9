// Hosted service benchmark (issue 14): signup and login latency (deliberately slow: Argon2id), and
// the session check, GET /api/session, against a bare Hono route on the same server in the same run.
// The server runs in a child process (PGlite in memory, node-http adapter); autocannon drives 16
// connections from this process. The child times every request it serves (performance.now around
// the handler), so "server time" excludes the client and the network.
// Target: the session check under 1 ms of server time (p50).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { median, percentile, writeSection } from './results.mjs';

const CONNECTIONS = 16;
const DURATION_S = 5;
const ROUNDS = 2;
const AUTH_SAMPLES = 10;

if (process.argv[2] === '--child') {
  const { PGlite } = await import('@electric-sql/pglite');
  const { Hono } = await import('hono');
  const { createHostedService } = await import('../dist/index.js');
  const { createSqlStorage, createSqlServiceStorage } = await import('../dist/adapters/storage-sql.js');
  const { serveNodeHttp } = await import('../dist/adapters/node-http.js');
  const pglite = await PGlite.create();
  const engineStorage = createSqlStorage({ pglite });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const service = createHostedService({ storage, settings: { sessionSecrets: ['b'.repeat(40)], authIpLimitPerMinute: 1_000_000 } });
  const times = { session: [], bare: [] };
  const app = new Hono();
  // The bare route answers a session-sized JSON body with no work behind it.
  const bareBody = {
    user: { id: '00000000-0000-4000-8000-000000000000', email: 'bench@example.test' },
    org: { id: '00000000-0000-4000-8000-000000000001', name: 'Bench' },
    role: 'owner',
    orgs: [],
  };
  app.get('/bench/bare', (c) => c.json(bareBody));
  app.get('/bench/stats', (c) => c.json(times));
  app.post('/bench/reset', (c) => {
    times.session = [];
    times.bare = [];
    return c.json({});
  });
  const server = await serveNodeHttp({
    fetch: async (req, env) => {
      const path = new URL(req.url).pathname;
      const t0 = performance.now();
      const res = path.startsWith('/bench/') ? await app.fetch(req) : await service.fetch(req, env);
      const ms = performance.now() - t0;
      if (path === '/api/session') times.session.push(ms);
      else if (path === '/bench/bare') times.bare.push(ms);
      return res;
    },
  });
  process.stdout.write(`${server.url}\n`);
  process.on('SIGTERM', async () => {
    await server.close();
    await service.dispose();
    await engineStorage.dispose();
    await pglite.close();
    process.exit(0);
  });
} else {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = (await waitForLine(child, /^http:\/\/\S+$/, { what: 'the hosted bench server' })).line;
  const post = (path, body, cookie) =>
    fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });

  const signupMs = [];
  const loginMs = [];
  let cookie;
  for (let i = 0; i < AUTH_SAMPLES; i++) {
    const t0 = performance.now();
    const res = await post('/api/auth/signup', { email: `bench${i}@example.test`, password: 'correct horse battery staple' });
    signupMs.push(performance.now() - t0);
    if (res.status !== 201) throw new Error(`signup ${res.status}`);
    cookie ??= res.headers.getSetCookie()[0].split(';')[0];
  }
  for (let i = 0; i < AUTH_SAMPLES; i++) {
    const t0 = performance.now();
    const res = await post('/api/auth/login', { email: `bench${i}@example.test`, password: 'correct horse battery staple' });
    loginMs.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`login ${res.status}`);
  }

  const load = (path) =>
    new Promise((resolve, reject) =>
      autocannon({ url: url + path, connections: CONNECTIONS, duration: DURATION_S, headers: { cookie } }, (err, r) => (err ? reject(err) : resolve(r))),
    );
  const rows = { session: [], bare: [] };
  await load('/api/session'); // warm-up
  await post('/bench/reset', {});
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of [
      ['session', '/api/session'],
      ['bare', '/bench/bare'],
    ]) {
      const r = await load(path);
      if (r.non2xx > 0) throw new Error(`${path}: ${r.non2xx} non-2xx answers`);
      rows[name].push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 });
    }
  }
  const stats = await (await fetch(`${url}/bench/stats`)).json();
  child.kill('SIGTERM');

  const agg = (name) => ({
    rps: median(rows[name].map((r) => r.rps)),
    p50: median(rows[name].map((r) => r.p50)),
    p99: median(rows[name].map((r) => r.p99)),
    server50: median(stats[name]),
    server99: percentile(stats[name], 99),
  });
  const s = agg('session');
  const b = agg('bare');
  const fmt = (n) => n.toFixed(2);
  const body = `
Signup and login are deliberately slow (Argon2id m=19 MiB, t=2, p=1): ${AUTH_SAMPLES} sequential calls each.

| call | p50 ms | max ms |
|---|---|---|
| POST /api/auth/signup | ${fmt(median(signupMs))} | ${fmt(Math.max(...signupMs))} |
| POST /api/auth/login | ${fmt(median(loginMs))} | ${fmt(Math.max(...loginMs))} |

The session check against a bare Hono route on the same server, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s (medians):

| route | req/s | p50 ms | p99 ms | server p50 ms | server p99 ms |
|---|---|---|---|---|---|
| GET /api/session (signature, one call of the session lookup function, orgs list) | ${Math.round(s.rps)} | ${s.p50} | ${s.p99} | ${fmt(s.server50)} | ${fmt(s.server99)} |
| GET /bench/bare (same body, no work) | ${Math.round(b.rps)} | ${b.p50} | ${b.p99} | ${fmt(b.server50)} | ${fmt(b.server99)} |

Session / bare throughput: **${((s.rps / b.rps) * 100).toFixed(1)}%**. Session check server time p50 **${fmt(s.server50)} ms** (target < 1 ms: ${s.server50 < 1 ? 'met' : 'not met'}).
`;
  writeSection('hosted', 'Hosted service: accounts and the session check', body);
  process.stdout.write(body);
}
