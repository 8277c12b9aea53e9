import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { waitForLine } from '../helpers/child-line.mjs';
import { Client } from '../helpers/hosted.js';
import { describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';

/**
 * Atomic enqueue (docs/hosted-api.md, "Queue dispatch"): the API process of queue dispatch
 * (examples/hosted-service/main.mjs, SVC_ROLE=api, SVC_RUN_DISPATCH=queue, on Postgres) is killed
 * (SIGKILL, by its test-only crash point FLOWCTL_CRASH_AT=enqueue-before-commit) after it wrote a
 * queued run's engine record, execution row and queue message, before the commit: none of the three
 * is left. A second API process on the same database (no crash point) then queues a run: all three
 * are there, and they name each other.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'examples/hosted-service/main.mjs');
const SESSION_SECRET = 'e'.repeat(40);
const SECRETS_KEY = Buffer.alloc(32, 9).toString('base64');

function startApi(
  dbUrl: string,
  schema: string,
  dataDir: string,
  extra: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: dbUrl,
      FLOWCTL_DB_SCHEMA: schema,
      FLOWCTL_DB_POOL_SIZE: '3',
      SVC_ROLE: 'api',
      SVC_RUN_DISPATCH: 'queue',
      SVC_SCHEDULER: '0',
      SVC_SESSION_SECRETS: SESSION_SECRET,
      SVC_SECRETS_KEY: SECRETS_KEY,
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      ...extra,
    },
  });
  return waitForLine(child, /flowctl hosted service on (http:\/\/127\.0\.0\.1:\d+)/, { stream: 'stderr', what: 'the API process' }).then(
    ({ match, output }) => ({ child, url: match[1]!, stderr: output }),
  );
}

const closed = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
    : new Promise((r) => child.once('close', (code, signal) => r({ code, signal })));

describePostgres('atomic enqueue: the API process killed inside the enqueue transaction (Postgres)', (dbUrl) => {
  const schema = uniqueSchemaName('svc_enqkill');
  const dataDir = mkdtempSync(join(tmpdir(), 'flowctl-enqkill-'));
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([closed(child), new Promise((r) => setTimeout(r, 30_000).unref())]);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(dbUrl, schema);
  }, 60_000);

  const q = (text: string, values: unknown[] = []) => pgQuery(dbUrl, text.replaceAll('%s.', `"${schema}".`).replaceAll('%q.', `"${schema}_pgboss".`), values);
  const counts = async () => ({
    runs: Number((await q(`select count(*)::int as n from %s.runs`))[0]!.n),
    executions: Number((await q(`select count(*)::int as n from %s.svc_executions`))[0]!.n),
    messages: Number((await q(`select count(*)::int as n from %q.job where name = 'flowctl-runs'`))[0]!.n),
  });

  it('a kill before the commit leaves no run, no execution and no message; a live process then writes all three', async () => {
    const crashing = await startApi(dbUrl, schema, dataDir, { FLOWCTL_CRASH_AT: 'enqueue-before-commit' });
    children.push(crashing.child);
    const owner = new Client(crashing.url);
    await owner.signup('enqueue-kill@example.test');
    expect((await owner.call('POST', '/api/automations/example')).status).toBe(201);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
    const gateway = (url: string) =>
      fetch(`${url}/v1/run/example-forecast`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { city: 'Oslo' } }),
      });

    // The request dies with the process: no answer at all.
    const answer = await gateway(crashing.url).then(
      (res) => `answered ${res.status}`,
      () => 'no answer',
    );
    expect(answer).toBe('no answer');
    expect(await closed(crashing.child)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(crashing.stderr()).toContain('crash point enqueue-before-commit');
    // Postgres rolled the transaction back with its connection: nothing of the run is left.
    expect(await counts()).toEqual({ runs: 0, executions: 0, messages: 0 });

    // The same request on a process without the crash point: all three, naming each other.
    const live = await startApi(dbUrl, schema, dataDir, {});
    children.push(live.child);
    const res = await gateway(live.url);
    const body = (await res.json()) as { run_id: string; status: string };
    expect([res.status, body.status]).toEqual([200, 'queued']);
    expect(await counts()).toEqual({ runs: 1, executions: 1, messages: 1 });
    const [execution] = await q(`select id, run_id, status from %s.svc_executions`);
    const [run] = await q(`select id, status from %s.runs`);
    const [message] = await q(`select data from %q.job where name = 'flowctl-runs'`);
    expect(run).toEqual({ id: body.run_id, status: 'pending' });
    expect(execution).toMatchObject({ run_id: body.run_id, status: 'queued' });
    expect(message!.data).toMatchObject({ execution_id: execution!.id });
  }, 180_000);
});
