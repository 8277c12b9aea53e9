import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { compile } from '../../src/flow/compile.js';
import { verifyJournal } from '../../src/run/fixture.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { expect } from 'vitest';
import { holdFlow } from './hold-flow.js';
import { Client } from './hosted.js';
import { publishPureAutomation, publishSpecAutomation } from './pure-automation.js';

/**
 * The chaos test's data (test/chaos/hosted-chaos.test.ts), on the database of its processes: the
 * org it loads (set up through an API process, and as publish leaves the rows), and the check of
 * every stored journal afterwards.
 */

/**
 * An org with a live key; the pure `hello` and the `hold` flow (held on `siteUrl`/hold) published as
 * publish leaves them; the browser flow `page` published through the studio's authoring routes; a
 * schedule of hello firing every second.
 */
export async function setupChaosOrg(apiUrl: string, databaseUrl: string, siteUrl: string): Promise<{ orgId: string; key: string; scheduleId: string }> {
  // An org with a live key; the pure `hello` and the `hold` flow published as publish leaves them;
  // the browser flow `page` published through the studio's authoring routes; a schedule of hello.
  const owner = new Client(apiUrl);
  const { user, org } = await owner.signup('chaos@example.test');
  let scheduleId = '';
  const engineStorage: SqlStorage = createSqlStorage({ databaseUrl, poolSize: 2 });
  const storage = createSqlServiceStorage(engineStorage);
  // Not a service: an engine of this test only to store the flows' specs and rows as publish leaves
  // them (it runs nothing, sweeps nothing). Every run goes through the processes above, each
  // examples/hosted-service/main.mjs, i.e. the shipped assembly.
  const engine: Engine = createEngine({ storage: engineStorage, sweepMs: 0 });
  try {
    const hello = await publishPureAutomation(storage, engine, org.id, user.id, 'hello');
    const compiled = compile(holdFlow(300_000), { tools: createToolRegistry(builtinTools()), file: 'hold.yaml' });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled));
    await publishSpecAutomation(storage, engine, {
      orgId: org.id,
      userId: user.id,
      name: 'hold',
      spec: compiled.spec,
      task: 'Hold then greet',
      site: siteUrl,
    });
    const schedule = await owner.call('POST', `/api/automations/${hello.id}/schedules`, { cron: '* * * * * *', inputs: { who: 'cron' } });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    scheduleId = schedule.body.schedule.id as string;
  } finally {
    await engine.dispose();
  }
  const created = await owner.call('POST', '/api/automations', { name: 'page', site: `${siteUrl}/page`, task: 'Read the title of the chaos page' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.automation.id as string;
  const patched = await owner.call('PATCH', `/api/authoring/${id}`, {
    captured_ops: [
      { kind: 'navigate', url: `${siteUrl}/page` },
      { kind: 'extract', target: '#t', name: 'title' },
    ],
  });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const published = await owner.call('POST', `/api/authoring/${id}/publish`);
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  const minted = await owner.call('POST', '/api/keys', { mode: 'live' });
  expect(minted.status).toBe(201);
  return { orgId: org.id, key: minted.body.secret as string, scheduleId };
}

/** Every stored run's journal: its hash chain verifies, it ends with run_finished, and it has one run_started. */
export async function checkStoredJournals(databaseUrl: string, runIds: string[]): Promise<{ verified: number; duplicates: number; broken: string[] }> {
  const verifier = createSqlStorage({ databaseUrl, poolSize: 4 });
  // Not a service: a reader of the stored journals (getRun only; it runs and sweeps nothing).
  const engine = createEngine({ storage: verifier, sweepMs: 0 });
  let verified = 0;
  let duplicates = 0;
  const broken: string[] = [];
  try {
    for (const id of runIds) {
      const run = (await engine.getRun(id))!;
      try {
        verifyJournal(run);
      } catch (err) {
        broken.push(`${id}: ${(err as Error).message}`);
        continue;
      }
      if (run.journal.at(-1)?.event !== 'run_finished') broken.push(`${id}: no run_finished`);
      if (run.journal.filter((e) => e.event === 'run_started').length !== 1) duplicates++;
      verified++;
    }
  } finally {
    await engine.dispose();
  }
  return { verified, duplicates, broken };
}
