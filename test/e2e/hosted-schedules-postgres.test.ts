import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assembleHostedService, type HostedAssembly } from '../../adapters/hosted/index.js';
import { Client } from '../helpers/hosted.js';
import { bundleChildScript, describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Schedules with three service processes on one Postgres schema (this test's process and two spawned
 * ones), each the shipped assembly (assembleHostedService, as `npm start` builds it) running its
 * scheduler loop: a 6-field schedule at the minimum interval (2 s here) fires every one of its times
 * exactly once (one claim row and one run_ref per fire time, none doubled); a
 * disabled schedule never fires; disabling stops the fires.
 */

const SESSION_SECRET = 'p'.repeat(40);

const CHILD_SOURCE = `
import { assembleHostedService } from '@root/adapters/hosted/index.ts';

const [url, schema, secret] = process.argv.slice(2);
const warn = (level) => (m) => process.stderr.write('[child ' + process.pid + '] ' + level + ': ' + m + '\\n');
const assembly = await assembleHostedService({
  database: { databaseUrl: url, schema, poolSize: 4 },
  settings: { sessionSecrets: [secret], minCronIntervalSeconds: 2, authIpLimitPerMinute: 10000 },
  web: false,
  logger: { debug() {}, info() {}, warn: warn('warn'), error: warn('error') },
});
process.stdout.write('url ' + assembly.url + '\\n');
process.on('SIGTERM', async () => {
  await assembly.close();
  process.exit(0);
});
`;

function firstLine(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const i = buffer.indexOf('\n');
      if (i >= 0) resolve(buffer.slice(0, i));
    });
    child.on('close', (code) => reject(new Error(`child exited (${code}) before printing its URL:\n${stderr()}`)));
  });
}

describePostgres('hosted schedules across processes (Postgres)', (dbUrl) => {
  const schema = uniqueSchemaName('svc_sched');
  let service: HostedAssembly;
  const children: { child: ChildProcess; url: string; stderr: () => string }[] = [];

  beforeAll(async () => {
    service = await assembleHostedService({
      database: { databaseUrl: dbUrl, schema, poolSize: 4 },
      settings: { sessionSecrets: [SESSION_SECRET], minCronIntervalSeconds: 2, authIpLimitPerMinute: 10_000 },
      web: false,
    });
    const script = await bundleChildScript('hosted-scheduler', CHILD_SOURCE);
    for (let i = 0; i < 2; i++) {
      const child = spawn(process.execPath, [script, dbUrl, schema, SESSION_SECRET], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
      const line = await firstLine(child, () => err);
      children.push({ child, url: line.replace(/^url /, ''), stderr: () => err });
    }
  }, 180_000);

  afterAll(async () => {
    for (const { child } of children) {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('close', r));
        child.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 30_000).unref())]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
    await service?.close();
    await dropSchema(dbUrl, schema);
  });

  const q = (text: string, values: unknown[] = []) => pgQuery(dbUrl, text.replaceAll('%s.', `"${schema}".`), values);
  const firesOf = async (scheduleId: string) =>
    (await q('select fire_at, claimed_by, execution_id, error from %s.svc_schedule_fires where schedule_id = $1 order by fire_at', [scheduleId])) as {
      fire_at: Date;
      claimed_by: string;
      execution_id: string | null;
      error: string | null;
    }[];

  it('fires each time of a 6-field schedule at the minimum interval once with three processes running; a disabled one never fires', async () => {
    const owner = new Client(service.url);
    const { user, org } = await owner.signup('multi@example.test');
    const automation = await publishPureAutomation(service.storage, service.engine, org.id, user.id, 'greet');
    // The cookie is signed with the shared secret: every process accepts it.
    const viaB = new Client(children[0]!.url);
    const viaC = new Client(children[1]!.url);
    viaB.cookie = viaC.cookie = owner.cookie;

    const finer = await viaB.call('POST', `/api/automations/${automation.id}/schedules`, { cron: '* * * * * *' });
    expect([finer.status, finer.body.issues?.[0]?.code]).toEqual([422, 'cron_too_frequent']);
    const disabled = await viaB.call('POST', `/api/automations/${automation.id}/schedules`, {
      cron: '*/2 * * * * *',
      enabled: false,
      inputs: { who: 'never' },
    });
    expect(disabled.status).toBe(201);
    const x = await viaB.call('POST', `/api/automations/${automation.id}/schedules`, { cron: '*/2 * * * * *', inputs: { who: 'x' } });
    expect(x.status).toBe(201);
    const xId = x.body.schedule.id as string;

    await waitUntil(async () => (await firesOf(xId)).filter((f) => f.execution_id !== null).length >= 6, { what: 'six dispatched fires of the schedule' });
    const off = await viaC.call('PATCH', `/api/schedules/${xId}`, { enabled: false });
    expect(off.body.schedule.enabled).toBe(false);
    const offAt = Date.now();

    // Time goes on, measured in fires of another schedule (no sleeping): three fires after the disable.
    const y = await owner.call('POST', `/api/automations/${automation.id}/schedules`, { cron: '*/2 * * * * *', inputs: { who: 'y' } });
    const yId = y.body.schedule.id as string;
    await waitUntil(async () => (await firesOf(yId)).filter((f) => f.execution_id !== null).length >= 3, { what: 'three fires of the second schedule' });
    await waitUntil(
      async () =>
        (
          await q(
            `select count(*)::int as n from %s.svc_executions where org_id = $1 and dispatch = 'schedule' and status not in ('succeeded', 'failed', 'canceled')`,
            [org.id],
          )
        )[0]!.n === 0,
      { what: 'every scheduled run terminal' },
    );

    const xFires = await firesOf(xId);
    const yFires = await firesOf(yId);
    const times = xFires.map((f) => f.fire_at.getTime());
    // Every fire time of the schedule between its first and last fire, each once, none after the disable.
    expect(times.every((t) => t % 2000 === 0)).toBe(true);
    const expected = (times.at(-1)! - times[0]!) / 2000 + 1;
    expect(xFires.length).toBe(expected);
    expect(xFires.length).toBeGreaterThanOrEqual(6);
    expect(times.at(-1)!).toBeLessThanOrEqual(offAt);
    expect(await firesOf(disabled.body.schedule.id)).toEqual([]);
    for (const f of [...xFires, ...yFires]) expect([f.execution_id === null, f.error]).toEqual([false, null]);

    // No double fires: one run_ref (dispatch schedule) per claimed fire time, each referenced once.
    const executions = (await q(`select id, run_id, status, flow_digest from %s.svc_executions where org_id = $1 and dispatch = 'schedule'`, [org.id])) as {
      id: string;
      run_id: string;
      status: string;
      flow_digest: string;
    }[];
    const fired = [...xFires, ...yFires].map((f) => f.execution_id!);
    expect(new Set(fired).size).toBe(fired.length);
    expect(executions.map((e) => e.id).sort()).toEqual([...fired].sort());
    expect(new Set(executions.map((e) => e.run_id)).size).toBe(executions.length);
    expect(executions.every((e) => e.status === 'succeeded' && e.flow_digest === automation.live_digest)).toBe(true);
    // The engine holds exactly those runs, with the schedule's inputs.
    const runs = (await q(`select id, inputs::text as inputs from %s.runs where id = any($1::text[])`, [executions.map((e) => e.run_id)])) as {
      id: string;
      inputs: string;
    }[];
    expect(runs).toHaveLength(executions.length);

    const claimers = new Map<string, number>();
    for (const f of [...xFires, ...yFires]) claimers.set(f.claimed_by, (claimers.get(f.claimed_by) ?? 0) + 1);
    process.stderr.write(
      `[schedules] ${xFires.length + yFires.length} fires claimed by ${claimers.size} of 3 processes: ${JSON.stringify(Object.fromEntries(claimers))}\n`,
    );
    for (const c of children) expect(c.child.exitCode).toBeNull();
  }, 240_000);
});
