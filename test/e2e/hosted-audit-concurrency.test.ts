import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostedAssembly } from '../../adapters/hosted/index.js';
import { Client, PostgresAssemblies, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { describePostgres, uniqueSchemaName } from '../helpers/postgres.js';

/**
 * Audited writes at once in one org (docs/hosted-api.md, "Audit log"): every request writes its row
 * and its audit entry in one transaction, and the core seals each entry against the org's newest
 * (src/audit/chain.ts). However many requests run at once, on one process (PGlite) or on two API
 * processes sharing a Postgres schema, every request succeeds and the org keeps one unbroken chain
 * holding every entry.
 */

const WRITES = 12;

/** Key mints and secret writes, half of each, all at once; `clients[i % n]` sends request i. */
async function auditedWritesAtOnce(clients: Client[]): Promise<number[]> {
  const results = await Promise.all(
    Array.from({ length: WRITES }, (_, i) => {
      const c = clients[i % clients.length]!;
      return i % 2 === 0 ? c.call('POST', '/api/keys', { mode: 'live', name: `key-${i}` }) : c.call('PUT', `/api/secrets/S${i}`, { value: `value-${i}` });
    }),
  );
  return results.map((r) => r.status);
}

async function expectOneChain(c: Client): Promise<void> {
  expect((await c.call('GET', '/api/audit/verify')).body).toEqual({ ok: true, entries: WRITES + 1 });
  const page = (await c.call('GET', '/api/audit?limit=200')).body as { entries: { metadata: { action: string } }[] };
  const actions = page.entries.map((e) => e.metadata.action).sort();
  expect(actions).toEqual(['org.create', ...Array<string>(WRITES / 2).fill('key.mint'), ...Array<string>(WRITES / 2).fill('secret.create')].sort());
}

describe('audited writes at once in one org (PGlite, one process)', () => {
  let h: HostedFixture;
  beforeAll(async () => {
    h = await startHosted();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('every request succeeds and the chain holds every entry, unbroken', async () => {
    const owner = new Client(h.url);
    await owner.signup('audit-pglite@example.test');
    const statuses = await auditedWritesAtOnce([owner]);
    expect(statuses).toEqual(Array.from({ length: WRITES }, (_, i) => (i % 2 === 0 ? 201 : 200)));
    await expectOneChain(owner);
  });
});

describePostgres('audited writes at once in one org, from two API processes (Postgres)', (dbUrl) => {
  const stack = new PostgresAssemblies(dbUrl, uniqueSchemaName('svc_auditc'));
  let instances: HostedAssembly[] = [];

  beforeAll(async () => {
    instances = await stack.apis(2, { sessionSecrets: ['c'.repeat(40)], secretsKeys: [Buffer.alloc(32, 7)] });
  }, 120_000);
  afterAll(async () => {
    await stack.close();
  });

  it('every request succeeds on either process and the chain holds every entry, unbroken', async () => {
    const owner = new Client(instances[0]!.url);
    await owner.signup('audit-pg@example.test');
    // The same session on the second process.
    const second = new Client(instances[1]!.url);
    second.cookie = owner.cookie;
    const statuses = await auditedWritesAtOnce([owner, second]);
    expect(statuses).toEqual(Array.from({ length: WRITES }, (_, i) => (i % 2 === 0 ? 201 : 200)));
    await expectOneChain(second);
  });
});
