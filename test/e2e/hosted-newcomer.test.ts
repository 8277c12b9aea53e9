import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The whole path as a new user takes it: `npm start` (the hosted service on PGlite), then curl with a
 * cookie jar: sign up, create an org, add a member, mint and revoke a key, read the audit. The service
 * is a separate process; the test reads its printed URL and stops it with Ctrl-C (SIGINT).
 */

const repo = resolve(import.meta.dirname, '../..');
const sh = promisify(execFile);

let dir: string;
let child: ChildProcess;
let url: string;
let stderr = '';

async function curl(jar: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const args = ['-s', '-c', jar, '-b', jar, '-X', method, '-w', '\n%{http_code}', `${url}${path}`];
  if (body !== undefined) args.push('-H', 'content-type: application/json', '-d', JSON.stringify(body));
  const { stdout } = await sh('curl', args);
  const lines = stdout.split('\n');
  const status = Number(lines.pop());
  const text = lines.join('\n');
  return { status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-newcomer-'));
  child = spawn('npm', ['start', '--silent'], {
    cwd: repo,
    env: { ...process.env, PORT: '0', SVC_DATA_DIR: join(dir, '.data'), NODE_ENV: 'development' },
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own process group, so the test can send Ctrl-C to npm and the server as a terminal would.
    detached: true,
  });
  url = await new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      // The banner ends with the Ctrl-C line: wait for all of it.
      const m = /flowctl hosted service on (http:\/\/\S+)/.exec(stderr);
      if (m && stderr.includes('Ctrl-C stops it')) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited ${code}:\n${stderr}`)));
  });
}, 120_000);

afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await rm(dir, { recursive: true, force: true });
});

describe('npm start, then curl as a newcomer would', () => {
  it('prints the URL and a ready-to-paste signup command', () => {
    expect(stderr).toContain(`curl -s -c jar -b jar -X POST ${url}/api/auth/signup`);
    expect(stderr).toContain('npm run start:engine');
  });

  it('signup, create an org, add a member, mint and revoke a key, read the audit, run the starter example through the gateway; Ctrl-C stops it', async () => {
    const jar = join(dir, 'owner.jar');
    const member = join(dir, 'member.jar');
    const signup = await curl(jar, 'POST', '/api/auth/signup', { email: 'new@example.test', password: 'a long passphrase', org_name: 'First' });
    expect(signup.status).toBe(201);
    expect(await readFile(jar, 'utf8')).toMatch(/#HttpOnly_127\.0\.0\.1\tFALSE\t\/\tFALSE\t\d+\tsvc_session\t/);
    expect((await curl(member, 'POST', '/api/auth/signup', { email: 'colleague@example.test', password: 'another passphrase' })).status).toBe(201);

    const org = await curl(jar, 'POST', '/api/orgs', { name: 'Team' });
    expect(org.status).toBe(200);
    expect((await curl(jar, 'GET', '/api/session')).body.org.name).toBe('Team');
    expect((await curl(jar, 'POST', '/api/members', { email: 'colleague@example.test', role: 'member' })).status).toBe(201);

    const key = await curl(jar, 'POST', '/api/keys', { mode: 'test', name: 'laptop' });
    expect(key.status).toBe(201);
    expect(key.body.secret).toMatch(/^svc_test_[0-9A-Za-z]{36}$/);
    expect((await curl(jar, 'DELETE', `/api/keys/${key.body.key.id}`)).status).toBe(204);
    const keys = await curl(jar, 'GET', '/api/keys');
    expect(keys.body.keys[0].revoked_at).not.toBeNull();

    const audit = await curl(jar, 'GET', '/api/audit');
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((e: any) => e.metadata.action)).toEqual(['key.revoke', 'key.mint', 'member.add', 'org.create']);

    expect((await curl(member, 'GET', '/api/audit')).status).toBe(200); // the colleague's own org
    expect((await curl(jar, 'GET', '/readyz')).body).toEqual({ status: 'ready' });

    // The starter example, published at once, run through the gateway with the live key.
    const example = await curl(jar, 'POST', '/api/automations/example');
    expect(example.body.automation.status).toBe('published');
    const liveKey = (await curl(jar, 'POST', '/api/keys', { mode: 'live' })).body.secret as string;
    const { stdout } = await sh('curl', [
      '-s',
      '-X',
      'POST',
      `${url}/v1/run/example-forecast`,
      '-H',
      `authorization: Bearer ${liveKey}`,
      '-H',
      'content-type: application/json',
      '-d',
      '{"inputs":{"city":"Oslo"}}',
    ]);
    const result = JSON.parse(stdout);
    expect(result.status).toBe('succeeded');
    expect(result.output.forecast).toMatch(/^Forecast for Oslo: /);
    expect((await curl(jar, 'GET', '/api/executions')).body.executions[0].run_id).toBe(result.run_id);

    // The data lives in SVC_DATA_DIR, the generated secrets are private to the user.
    expect(((await stat(join(dir, '.data', 'secrets.json'))).mode & 0o777).toString(8)).toBe('600');

    const exited = new Promise<string>((r) => child.once('exit', (code, signal) => r(signal ?? String(code))));
    process.kill(-child.pid!, 'SIGINT'); // Ctrl-C: the whole foreground group
    // npm ends on the Ctrl-C itself (signal, or 130 = 128 + SIGINT) once its script has stopped.
    expect(['0', '130', 'SIGINT']).toContain(await exited);
    expect(stderr).toContain('SIGINT: stopping');
    expect(stderr).not.toMatch(/hosted-service: .*Error/);
  });
});
