// Hosted MCP endpoint benchmark (issue 17): `tools/list` for an org with 1,000 published automations,
// and a sync `tools/call` of a pure flow against the same run through the run gateway
// (POST /v1/run/{flow}, same automation, same inputs), interleaved call by call.
// The server runs in a child process (PGlite in memory, node-http adapter, the built package); this
// process sends one request at a time. The child times every request it serves (performance.now
// around the handler), so "server" excludes the client and the network.
// Targets: tools/list p50 under 15 ms; tools/call / gateway p50 under 1.3.
// The 1,000 automations are written straight into the service's storage (a pure flow each, its own
// FlowSpec and digest, status published): publishing through the authoring routes compiles browser
// captures, which is not what is measured here.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { median, percentile, writeSection } from './results.mjs';

const AUTOMATIONS = 1000;
const LIST_WARMUP = 20;
const LIST_SAMPLES = 200;
const CALL_WARMUP = 20;
const CALL_SAMPLES = 300;

const flowText = (i) => `name: flow-${String(i).padStart(4, '0')}
description: Greeting number ${i}.
inputs:
  who: {type: string, required: true, description: Whom to greet}
steps:
  - {id: greet, tool: core/template@1, args: {template: "Hello \${inputs.who} from flow ${i}"}}
output:
  greeting: \${steps.greet.output.text}
`;

if (process.argv[2] === '--child') {
  const { PGlite } = await import('@electric-sql/pglite');
  const { parse } = await import('yaml');
  const { createHostedService, createEngine, createToolRegistry, builtinTools, compileFlow } = await import('../dist/index.js');
  const { createSqlStorage, createSqlServiceStorage } = await import('../dist/adapters/storage-sql.js');
  const { serveNodeHttp } = await import('../dist/adapters/node-http.js');
  const pglite = await PGlite.create();
  const engineStorage = createSqlStorage({ pglite });
  const tools = createToolRegistry(builtinTools());
  const engine = createEngine({ storage: engineStorage, tools });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const service = createHostedService({
    storage,
    engine,
    tools,
    settings: { sessionSecrets: ['b'.repeat(40)], authIpLimitPerMinute: 1_000_000, ipLimitPerMinute: 10_000_000, orgLimitPerMinute: 10_000_000 },
  });
  const times = { list: [], call: [], gateway: [] };
  // CPU time of the process while it serves one request (requests come one at a time): less
  // sensitive than wall time to other processes on a busy machine.
  const cpu = { list: [], call: [], gateway: [] };
  const server = await serveNodeHttp({
    fetch: async (req, env) => {
      const url = new URL(req.url);
      if (url.pathname === '/bench/stats') return Response.json({ ...times, cpu });
      if (url.pathname === '/bench/reset') {
        for (const k of Object.keys(times)) times[k] = [];
        for (const k of Object.keys(cpu)) cpu[k] = [];
        return Response.json({});
      }
      if (url.pathname === '/bench/seed') {
        const { org_id, count } = await req.json();
        const now = new Date().toISOString();
        for (let i = 0; i < count; i++) {
          const result = compileFlow(parse(flowText(i)), { file: `flows/flow-${i}.yaml`, tools });
          if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
          const digest = await engine.putSpec(result.spec);
          const name = `flow-${String(i).padStart(4, '0')}`;
          await storage.automations.create({
            id: crypto.randomUUID(),
            org_id,
            name,
            task: `Greet someone (number ${i})`,
            site: 'https://example.com/',
            mcp_enabled: true,
            created_at: now,
            status: 'published',
            live_digest: digest,
            needs_attention: false,
            example: false,
            params: [],
          });
        }
        return Response.json({ seeded: count });
      }
      const kind = url.pathname === '/mcp' ? req.headers.get('x-bench') : url.pathname.startsWith('/v1/run/') ? 'gateway' : undefined;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const res = await service.fetch(req, env);
      // The body is part of the work: read it through before stopping the clock.
      const body = await res.arrayBuffer();
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (kind && times[kind]) {
        times[kind].push(ms);
        cpu[kind].push((c.user + c.system) / 1000);
      }
      return new Response(body, { status: res.status, headers: res.headers });
    },
  });
  process.stdout.write(`${server.url}\n`);
  process.on('SIGTERM', async () => {
    await server.close();
    await service.dispose();
    await engine.dispose();
    await engineStorage.dispose();
    await pglite.close();
    process.exit(0);
  });
} else {
  const load1 = os.loadavg()[0];
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = (await waitForLine(child, /^http:\/\/\S+$/, { what: 'the MCP bench server' })).line;
  const json = async (path, body, headers = {}) => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  const signup = await json('/api/auth/signup', { email: 'bench@example.test', password: 'correct horse battery staple' });
  if (signup.status !== 201) throw new Error(`signup ${signup.status}`);
  const cookie = signup.headers.getSetCookie()[0].split(';')[0];
  const seedStart = performance.now();
  await json('/bench/seed', { org_id: signup.body.org.id, count: AUTOMATIONS });
  const seedMs = performance.now() - seedStart;
  const key = (await json('/api/keys', { mode: 'live' }, { cookie })).body.secret;
  const bearer = { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream' };

  // One request at a time; client time includes the loopback round trip and JSON parsing.
  const mcp = async (kind, message) => {
    const t0 = performance.now();
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bench': kind, ...bearer },
      body: JSON.stringify(message),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${kind}: ${res.status} ${text.slice(0, 300)}`);
    return { ms, bytes: text.length, body: JSON.parse(text) };
  };
  const gateway = async (flow, inputs) => {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/run/${flow}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer },
      body: JSON.stringify({ inputs }),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`gateway: ${res.status} ${text.slice(0, 300)}`);
    return { ms, body: JSON.parse(text) };
  };

  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const first = await mcp('list', list);
  if (first.body.result.tools.length !== AUTOMATIONS) throw new Error(`tools/list: ${first.body.result.tools.length} tools`);
  for (let i = 0; i < LIST_WARMUP; i++) await mcp('list', list);
  await json('/bench/reset', {});
  const listMs = [];
  let listBytes = 0;
  for (let i = 0; i < LIST_SAMPLES; i++) {
    const r = await mcp('list', list);
    listMs.push(r.ms);
    listBytes = r.bytes;
  }

  const flow = 'flow-0500';
  const inputs = { who: 'bench' };
  const callMsg = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: flow, arguments: inputs } };
  const check = await mcp('call', callMsg);
  const viaGateway = await gateway(flow, inputs);
  if (check.body.result.structuredContent?.greeting !== 'Hello bench from flow 500' || viaGateway.body.output?.greeting !== 'Hello bench from flow 500') {
    throw new Error(`unexpected results: ${JSON.stringify(check.body)} / ${JSON.stringify(viaGateway.body)}`);
  }
  for (let i = 0; i < CALL_WARMUP; i++) {
    await mcp('call', callMsg);
    await gateway(flow, inputs);
  }
  const stats0 = await (await fetch(`${url}/bench/stats`)).json();
  const serverList = stats0.list;
  const cpuList = stats0.cpu.list;
  await json('/bench/reset', {});
  const callMs = [];
  const gatewayMs = [];
  // Interleaved, alternating which goes first, so drift in the machine's load hits both alike.
  for (let i = 0; i < CALL_SAMPLES; i++) {
    if (i % 2 === 0) {
      callMs.push((await mcp('call', callMsg)).ms);
      gatewayMs.push((await gateway(flow, inputs)).ms);
    } else {
      gatewayMs.push((await gateway(flow, inputs)).ms);
      callMs.push((await mcp('call', callMsg)).ms);
    }
  }
  const stats = await (await fetch(`${url}/bench/stats`)).json();
  child.kill('SIGTERM');

  const fmt = (n) => n.toFixed(2);
  const row = (label, client, server, cpuMs) =>
    `| ${label} | ${fmt(median(client))} | ${fmt(percentile(client, 99))} | ${fmt(median(server))} | ${fmt(percentile(server, 99))} | ${fmt(median(cpuMs))} |`;
  const listP50 = median(listMs);
  const ratio = median(callMs) / median(gatewayMs);
  const serverRatio = median(stats.call) / median(stats.gateway);
  const body = `
An org with ${AUTOMATIONS.toLocaleString('en')} published automations (pure flows: one \`core/template\` step, each its own FlowSpec digest), one
live key with no scope; sequential requests over loopback. Client time is the round trip with the body read; server time
is measured around the service's handler in the server process. 1-minute load average ${load1.toFixed(1)} when it started
(${os.cpus().length} cores). Seeding the ${AUTOMATIONS} automations (compile, putSpec, insert) took ${(seedMs / 1000).toFixed(1)} s.

| request | client p50 ms | client p99 ms | server p50 ms | server p99 ms | server CPU p50 ms |
|---|---|---|---|---|---|
${row(`MCP \`tools/list\` (${AUTOMATIONS} tools, ${(listBytes / 1024).toFixed(0)} KiB JSON), ${LIST_SAMPLES} samples`, listMs, serverList, cpuList)}
${row(`MCP \`tools/call\` ${flow} (JSON mode), ${CALL_SAMPLES} samples`, callMs, stats.call, stats.cpu.call)}
${row(`gateway \`POST /v1/run/${flow}\`, same inputs, interleaved`, gatewayMs, stats.gateway, stats.cpu.gateway)}

\`tools/list\` p50 **${fmt(listP50)} ms** client, ${fmt(median(serverList))} ms server, ${fmt(median(cpuList))} ms server CPU (target < 15 ms: ${listP50 < 15 ? 'met' : 'not met'}).
\`tools/call\` / gateway p50: **${ratio.toFixed(2)}** client, ${serverRatio.toFixed(2)} server (target < 1.3: ${ratio < 1.3 ? 'met' : 'not met'}).
`;
  writeSection('hosted-mcp', 'Hosted MCP endpoint: tools/list for 1,000 automations, tools/call against the gateway', body);
  process.stdout.write(body);
}
