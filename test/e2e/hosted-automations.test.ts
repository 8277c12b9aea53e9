import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintApiKey } from '../../src/service/auth/api-keys.js';
import { Client, startBareService, startHosted, type HostedFixture } from '../helpers/hosted.js';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../../bin/flowctl.mjs');

/** A small multi-page site on loopback: login, search, a select, drag and drop, an upload, results. */
let site: Server;
let siteUrl: string;
let h: HostedFixture;
let owner: Client;
let member: Client;
let other: Client;

const UPLOAD = Buffer.from('invoice,total\n1,42\n');

function demoOps(base: string) {
  return [
    { kind: 'navigate', url: `${base}/login` },
    { kind: 'fill', target: { label: 'User', fallbacks: [{ css: '#user' }] }, value: 'ada', slot: 'user' },
    { kind: 'fill', target: { css: 'input[type=password]' }, slot: 'password' },
    { kind: 'click', target: { role: 'button', name: 'Sign in' } },
    { kind: 'fill', target: { label: 'Search' }, value: 'pears', slot: 'query' },
    { kind: 'select', target: { label: 'Aisle' }, value: 'produce' },
    { kind: 'drag', source: '#card-1', target: '#done' },
    { kind: 'upload', target: { label: 'Attachment' }, files: 'report.csv' },
    { kind: 'extract', target: '#results li', name: 'results', all: true },
  ];
}

beforeAll(async () => {
  site = createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><title>${req.url}</title><h1>${req.url}</h1>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  h = await startHosted();
  owner = new Client(h.url);
  member = new Client(h.url);
  other = new Client(h.url);
  const { org } = await owner.signup('owner@automations.test', 'correct horse battery', 'Automations Org');
  await member.signup('member@automations.test');
  await owner.addMember(member, 'member@automations.test', org.id);
  await other.signup('other@elsewhere.test');
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => site?.close(() => r()));
});

async function createAutomation(c: Client, name: string, task = 'Sign in, search and read the results') {
  const res = await c.call('POST', '/api/automations', { name, site: siteUrl, task });
  expect(res.status).toBe(201);
  return res.body.automation as { id: string; name: string; status: string; live_digest: string | null };
}

describe('automations', () => {
  it('create a draft; every constraint of the spec is a 422 with issues; names are unique per org', async () => {
    const a = await createAutomation(owner, 'first-draft');
    expect(a).toMatchObject({
      status: 'draft',
      live_digest: null,
      calls_7d: 0,
      last_run_at: null,
      needs_attention: false,
      rerecord_href: null,
      mcp_enabled: true,
    });
    const bad = await owner.call('POST', '/api/automations', { name: 'Bad Name', site: '', params: Array.from({ length: 201 }, () => ({ name: 'x' })) });
    expect(bad.status).toBe(422);
    expect(bad.body.issues.map((i: any) => i.path[0]).sort()).toEqual(['name', 'params', 'site']);
    expect((await owner.call('POST', '/api/automations', { name: 'x'.repeat(65), site: 's' })).status).toBe(422);
    const dup = await owner.call('POST', '/api/automations', { name: 'first-draft', site: siteUrl });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('name_taken');
    // Another org may use the same name.
    expect((await other.call('POST', '/api/automations', { name: 'first-draft', site: siteUrl })).status).toBe(201);
    const list = await owner.call('GET', '/api/automations');
    expect(list.body.automations.map((x: any) => x.name)).toEqual(['first-draft']);
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('draft');
  });

  it('members correct site and task; mcp_enabled is owner only and audited', async () => {
    const a = await createAutomation(owner, 'patchable');
    const patched = await member.call('PATCH', `/api/automations/${a.id}`, { site: 'https://example.test/app', task: 'Fixed task' });
    expect(patched.status).toBe(200);
    expect(patched.body.automation).toMatchObject({ site: 'https://example.test/app', task: 'Fixed task' });
    expect((await member.call('PATCH', `/api/automations/${a.id}`, { mcp_enabled: false })).status).toBe(403);
    expect((await member.call('PATCH', `/api/automations/${a.id}`, { site: '' })).status).toBe(422);
    const off = await owner.call('PATCH', `/api/automations/${a.id}`, { mcp_enabled: false });
    expect(off.body.automation.mcp_enabled).toBe(false);
    const audit = await owner.call('GET', '/api/audit?limit=1');
    expect(audit.body.entries[0].metadata).toMatchObject({ action: 'automation.mcp_enabled', to: false });
    expect((await other.call('PATCH', `/api/automations/${a.id}`, { task: 'x' })).status).toBe(404);
  });
});

describe('authoring and publish', () => {
  it("captured ops are validated with the engine's ops schema", async () => {
    const a = await createAutomation(owner, 'validated');
    const res = await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [{ kind: 'teleport' }, { kind: 'click' }, { kind: 'navigate', url: 'ftp://x' }],
    });
    expect(res.status).toBe(422);
    expect(res.body.issues.map((i: any) => i.path.join('.'))).toEqual(['captured_ops.0.kind', 'captured_ops.1.target', 'captured_ops.2.url']);
    const empty = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(empty.status).toBe(422);
  });

  it('publish gives the digest flowctl record + compile gives for the same ops; live FlowSpec by name; rollback and republish', async () => {
    const a = await createAutomation(owner, 'shop-search');
    const ops = demoOps(siteUrl);
    expect((await owner.call('PUT', `/api/authoring/${a.id}/files/report.csv`, { content_base64: UPLOAD.toString('base64') })).status).toBe(200);
    const patch = await member.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, input_slots: ['user', 'query'], secret_slots: ['password'] });
    expect(patch.status).toBe(200);
    expect(patch.body.session).toMatchObject({
      id: a.id,
      automation_id: a.id,
      input_slots: ['user', 'query'],
      secret_slots: ['password'],
      error: null,
      state: 'editing',
      secret_names: { password: 'password' },
    });
    expect((await member.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(403);
    const pub = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(pub.status).toBe(200);
    const digest1 = pub.body.flow_digest as string;
    expect(pub.body.automation).toMatchObject({ status: 'published', live_digest: digest1 });

    // The same ops through the CLI, in a fresh project.
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-hosted-cli-'));
    try {
      await run(process.execPath, [CLI, 'init'], { cwd: dir });
      await writeFile(join(dir, 'ops.json'), JSON.stringify(ops));
      await writeFile(join(dir, 'report.csv'), UPLOAD);
      await run(
        process.execPath,
        [
          CLI,
          'record',
          '--name',
          'shop-search',
          '--task',
          'Sign in, search and read the results',
          '--ops',
          'ops.json',
          '--input',
          'user',
          '--input',
          'query',
          '--secret',
          'password',
        ],
        { cwd: dir },
      );
      const out = await run(process.execPath, [CLI, 'compile', 'shop-search', '--check'], { cwd: dir });
      const cliDigest = /sha256:[0-9a-f]{64}/.exec(out.stdout + out.stderr)![0];
      expect(digest1).toBe(cliDigest);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const live = await member.call('GET', '/api/flowspecs/shop-search');
    expect(live.status).toBe(200);
    expect(live.headers.get('etag')).toBe(`"${digest1}"`);
    expect(live.body.name).toBe('shop-search');
    expect(live.body.inputs.password.secret).toBe(true);
    expect(live.body.inputs.password.default).toBeUndefined();

    // Editing needs a reopen; the live version stays live meanwhile.
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { input_slots: ['user'] })).status).toBe(409);
    expect((await member.call('POST', `/api/authoring/${a.id}/edit`)).status).toBe(403);
    const reopened = await owner.call('POST', `/api/authoring/${a.id}/edit`);
    expect(reopened.body.session.state).toBe('editing');
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation).toMatchObject({ status: 'published', live_digest: digest1 });
    // Narrowing the inputs: the query op becomes a fixed value (no slot), as every op's slot must be
    // one of the session's input or secret slots.
    const narrowed = ops.map((op: any) => (op.slot === 'query' ? (({ slot: _slot, ...rest }) => rest)(op) : op));
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { input_slots: ['user'] })).status).toBe(422);
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: narrowed, input_slots: ['user'] })).status).toBe(200);
    const pub2 = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    const digest2 = pub2.body.flow_digest as string;
    expect(digest2).not.toBe(digest1);
    const versions = await member.call('GET', `/api/automations/${a.id}/versions`);
    expect(versions.body.versions.map((v: any) => v.flow_digest)).toEqual([digest2, digest1]);

    expect((await member.call('POST', `/api/automations/${a.id}/rollback`, { flow_digest: digest1 })).status).toBe(403);
    const rolled = await owner.call('POST', `/api/automations/${a.id}/rollback`, { flow_digest: digest1 });
    expect(rolled.body.automation.live_digest).toBe(digest1);
    expect((await owner.call('GET', '/api/flowspecs/shop-search')).headers.get('etag')).toBe(`"${digest1}"`);
    expect((await owner.call('POST', `/api/automations/${a.id}/rollback`, { flow_digest: `sha256:${'0'.repeat(64)}` })).status).toBe(422);
    // Republishing (no change since) brings digest2 back without a new version row.
    const pub3 = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(pub3.body.flow_digest).toBe(digest2);
    expect((await owner.call('GET', `/api/automations/${a.id}/versions`)).body.versions).toHaveLength(2);
    const actions = (await owner.call('GET', '/api/audit?limit=6')).body.entries.map((e: any) => e.metadata.action);
    expect(actions).toEqual(['automation.publish', 'automation.rollback', 'automation.publish', 'automation.edit', 'automation.publish', 'automation.create']);
  });

  it("the live FlowSpec route gives one 404 body for unknown, other orgs' and draft names", async () => {
    await createAutomation(owner, 'still-draft');
    const bodies = await Promise.all([
      owner.call('GET', '/api/flowspecs/no-such-name'),
      owner.call('GET', '/api/flowspecs/still-draft'),
      other.call('GET', '/api/flowspecs/shop-search'),
    ]);
    for (const b of bodies) expect([b.status, b.body]).toEqual([404, bodies[0]!.body]);
    expect(bodies[0]!.body.error).toBe('not_found');
  });

  it('a compile problem is kept on the session, in words', async () => {
    const a = await createAutomation(owner, 'no-task', '');
    await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: [{ kind: 'navigate', url: siteUrl }] });
    const res = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(res.status).toBe(422);
    expect(res.body.issues[0].path).toEqual(['task']);
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.error).toMatch(/task/);
  });
});

describe('secret_leak', () => {
  const CANARY = 'CANARY-s3cr3t+/=value';

  it('an org secret typed into a capture is refused in plain, URL-encoded and base64 form; moved to a secret slot it publishes', async () => {
    expect((await member.call('PUT', '/api/secrets/api_token', { value: CANARY })).status).toBe(403);
    const set = await owner.call('PUT', '/api/secrets/api_token', { value: CANARY });
    expect(set.status).toBe(200);
    expect(set.body.secret.name).toBe('api_token');
    expect(JSON.stringify(set.body)).not.toContain(CANARY);
    const a = await createAutomation(owner, 'leaky');
    const forms = [CANARY, encodeURIComponent(CANARY), Buffer.from(CANARY).toString('base64'), `Bearer ${CANARY}`];
    for (const form of forms) {
      const res = await owner.call('PATCH', `/api/authoring/${a.id}`, {
        captured_ops: [
          { kind: 'navigate', url: `${siteUrl}/api?token=${encodeURIComponent(form)}` },
          { kind: 'fill', target: { label: 'Token' }, value: form },
        ],
      });
      expect([form, res.status, res.body.error]).toEqual([form, 422, 'secret_leak']);
      expect(res.body.message).toMatch(/secret slot/);
      expect(JSON.stringify(res.body)).not.toContain(CANARY);
      expect(JSON.stringify(res.body)).not.toContain(form);
    }
    // Nothing of it was stored.
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops).toEqual([]);
    // The right way: the field is a secret slot, no value.
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: `${siteUrl}/api` },
        { kind: 'fill', target: { label: 'Token' }, slot: 'api_token' },
      ],
      secret_slots: ['api_token'],
    });
    const pub = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(pub.status).toBe(200);
    const spec = await owner.call('GET', '/api/flowspecs/leaky');
    expect(JSON.stringify(spec.body)).not.toContain('CANARY');
    expect(spec.body.inputs.api_token.secret).toBe(true);
    const list = await member.call('GET', '/api/secrets');
    expect(list.body.secrets.map((s: any) => s.name)).toEqual(['api_token']);
    expect(JSON.stringify(list.body)).not.toContain(CANARY);
  });

  it('a literal typed into a password field, or a value shaped like a credential, is refused at publish', async () => {
    const a = await createAutomation(owner, 'password-literal');
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: siteUrl },
        { kind: 'fill', target: { css: 'input[type=password]' }, value: 'hunter2!' },
      ],
    });
    const res = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect([res.status, res.body.error]).toEqual([422, 'secret_leak']);
    expect(res.body.message).not.toContain('hunter2');
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('draft');
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.error).toMatch(/secret/);

    const key = mintApiKey('live');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    for (const value of [key, jwt, 'AKIAIOSFODNN7EXAMPLE', `ghp_${'a'.repeat(36)}`]) {
      const b = await createAutomation(owner, `cred-${Math.abs(hash(value))}`);
      await owner.call('PATCH', `/api/authoring/${b.id}`, {
        captured_ops: [
          { kind: 'navigate', url: siteUrl },
          { kind: 'fill', target: { label: 'Notes' }, value },
        ],
      });
      const r = await owner.call('POST', `/api/authoring/${b.id}/publish`);
      expect([value.slice(0, 8), r.status, r.body.error]).toEqual([value.slice(0, 8), 422, 'secret_leak']);
      expect(JSON.stringify(r.body)).not.toContain(value);
    }
  });

  it('secrets: names only in lists, owner-only writes, delete, 404 across orgs', async () => {
    expect((await owner.call('PUT', '/api/secrets/bad name', { value: 'x' })).status).toBe(422);
    expect((await owner.call('PUT', '/api/secrets/temp', { value: '' })).status).toBe(422);
    await owner.call('PUT', '/api/secrets/temp', { value: 'v1' });
    expect((await other.call('DELETE', '/api/secrets/temp')).status).toBe(404);
    expect((await member.call('DELETE', '/api/secrets/temp')).status).toBe(403);
    expect((await owner.call('DELETE', '/api/secrets/temp')).status).toBe(204);
    expect((await owner.call('DELETE', '/api/secrets/temp')).status).toBe(404);
    expect((await other.call('GET', '/api/secrets')).body.secrets).toEqual([]);
  });
});

describe('starter example', () => {
  it('with a browser wired in: published at once; idempotent, also under two concurrent calls', async () => {
    const c = new Client(h.url);
    await c.signup('example@starter.test');
    const [r1, r2] = await Promise.all([c.call('POST', '/api/automations/example'), c.call('POST', '/api/automations/example')]);
    const statuses = [r1.status, r2.status].sort();
    expect(statuses).toEqual([200, 201]);
    const created = (r1.status === 201 ? r1 : r2).body.automation;
    const again = (r1.status === 200 ? r1 : r2).body;
    expect(again).toMatchObject({ existed: true, automation: { id: created.id } });
    expect(created.status).toBe('published');
    expect(created.live_digest).toMatch(/^sha256:/);
    expect((await c.call('GET', '/api/automations')).body.automations).toHaveLength(1);
    const spec = await c.call('GET', `/api/flowspecs/${created.name}`);
    expect(spec.body.inputs.city).toBeDefined();
    const page = await fetch(`${h.url}/example/site`);
    expect(await page.text()).toContain('Forecast demo');
  });

  it('without a browser: a draft prefilled with the example site and task', async () => {
    // Not the assembly on purpose: the library embedded with no engine and no browser (the assembly always has both).
    const s = await startBareService();
    try {
      const c = new Client(s.url);
      await c.signup('nobrowser@starter.test');
      const r = await c.call('POST', '/api/automations/example');
      expect(r.status).toBe(201);
      expect(r.body.automation).toMatchObject({ status: 'draft', site: `${s.url}/example/site`, live_digest: null });
      expect(r.body.automation.task).toMatch(/forecast/);
      expect((await c.call('POST', '/api/automations/example')).body.existed).toBe(true);
    } finally {
      await s.close();
    }
  });
});

function hash(s: string): number {
  let h = 0;
  for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return h;
}
