// Where a hosted browser call's CPU goes (issue 30; docs/browser.md, "Screenshots"): two spawned
// `examples/hosted-service/main.mjs` services (what `npm start` runs), one with step screenshots and one
// with SVC_RUN_SCREENSHOTS=off, each with one corpus app's task published; calls alternate between
// them, and around each call the CPU of every thread of the service and of every Chromium process it
// started is read from /proc (Linux only). A process that ended during the call (a run's renderer) is
// not counted. Prints the median per call by process kind. APP=todomvc|jsonlint|jsonform, N=calls each.
// Not part of `npm run bench` (it writes no section): a probe to run when the numbers are in question.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { startApps } from './hosted-browser-apps.mjs';
import { median } from './results.mjs';

const repo = new URL('../', import.meta.url).pathname;
const N = Number(process.env.N ?? 10);
const { origin, APPS, close: closeApps } = await startApps(repo);
const app = APPS.find((a) => a.id === (process.env.APP ?? 'todomvc'));
if (!app) throw new Error(`APP must be one of ${APPS.map((a) => a.id).join(', ')}`);
const work = await mkdtemp(join(os.tmpdir(), 'flowctl-hosted-cpu-'));
const children = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

/** A spawned service with the task published and a live key: `call()` runs it once, returns the wall ms. */
async function service(name, env) {
  const child = spawn(process.execPath, [join(repo, 'examples/hosted-service/main.mjs')], {
    cwd: repo,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_EXAMPLE_PORT: '0',
      SVC_DATA_DIR: join(work, name),
      SVC_EGRESS_ALLOW: new URL(origin).host,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let log = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d;
      const m = /flowctl hosted service on (http:\/\/\S+)/.exec(log);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}:\n${log}`)));
  });
  let cookie = '';
  const api = async (method, path, body) => {
    const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', cookie }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
    if (set) cookie = set.split(';')[0];
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${name} ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  await api('POST', '/api/auth/signup', { email: `cpu-${name}@example.test`, password: 'correct horse battery', org_name: name });
  const key = (await api('POST', '/api/keys', { mode: 'live' })).secret;
  const created = await api('POST', '/api/automations', { name: `cpu-${app.id}`, site: app.ops[0].url, task: `CPU ${app.id}` });
  await api('PATCH', `/api/authoring/${created.automation.id}`, { captured_ops: app.ops });
  await api('POST', `/api/authoring/${created.automation.id}/publish`);
  const call = async () => {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/run/cpu-${app.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const body = await res.json();
    if (body.status !== 'succeeded') throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`);
    return performance.now() - t0;
  };
  return { name, pid: child.pid, call };
}

const TICK_MS = 1000 / 100; // USER_HZ
function cpuMs(statPath) {
  try {
    const stat = readFileSync(statPath, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return 0; // gone meanwhile
  }
}
function descendants(root) {
  const children = new Map();
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch {}
  }
  const out = [];
  for (const queue = [root]; queue.length > 0; ) for (const c of children.get(queue.pop()) ?? []) out.push(c), queue.push(c);
  return out;
}
/** CPU ms so far by kind: the service's main thread, its other threads by name, Chromium's processes by --type. */
function cpuByKind(pid) {
  const out = {};
  const add = (k, v) => (out[k] = (out[k] ?? 0) + v);
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const name = Number(t) === pid ? 'main thread' : readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim().replace(/\d+$/, '');
    add(`service: ${name}`, cpuMs(`/proc/${pid}/task/${t}/stat`));
  }
  for (const p of descendants(pid)) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
    } catch {}
    if (!cmd.includes('chrom')) continue;
    add(`chromium: ${/--type=([a-z-]+)/.exec(cmd)?.[1] ?? 'browser'}${/--utility-sub-type=network/.test(cmd) ? ' (network)' : ''}`, cpuMs(`/proc/${p}/stat`));
  }
  return out;
}

try {
  const services = [await service('screenshots', {}), await service('no-screenshots', { SVC_RUN_SCREENSHOTS: 'off' })];
  for (const s of services) for (let i = 0; i < 2; i++) await s.call(); // warm: browser up, pool filled
  const rows = new Map(services.map((s) => [s, []]));
  for (let i = 0; i < N; i++) {
    for (const s of i % 2 ? [...services].reverse() : services) {
      const before = cpuByKind(s.pid);
      const ms = await s.call();
      // The run's context closes after the response: let that and the pool's refill land in this call.
      await new Promise((r) => setTimeout(r, 300));
      const after = cpuByKind(s.pid);
      rows.get(s).push({ ms, cpu: Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)])) });
    }
  }
  const kinds = [...new Set([...rows.values()].flat().flatMap((r) => Object.keys(r.cpu)))].sort();
  const cell = (s, k) => median(rows.get(s).map((r) => r.cpu[k] ?? 0)).toFixed(0);
  const lines = [
    `${app.app}: ${N} calls each, alternating; CPU ms per call (median), 1-minute load ${os.loadavg()[0].toFixed(1)}`,
    `| | ${services.map((s) => s.name).join(' | ')} |`,
    `|---|${services.map(() => '---').join('|')}|`,
    `| wall ms | ${services.map((s) => median(rows.get(s).map((r) => r.ms)).toFixed(0)).join(' | ')} |`,
    ...kinds.filter((k) => services.some((s) => Number(cell(s, k)) > 0)).map((k) => `| ${k} | ${services.map((s) => cell(s, k)).join(' | ')} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
  closeApps?.();
  await rm(work, { recursive: true, force: true });
}
