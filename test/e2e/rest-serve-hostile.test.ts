import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject, FLOWCTL_BIN } from '../helpers/cli.js';
import { waitUntil } from '../helpers/wait.js';
import { holdConnection, rawExchange, rawRequest, spawnProcess, type RawAnswer, type Spawned } from './rest-helpers.js';

// `flowctl serve` as spawned by a user, attacked from a browser on another site and from raw sockets
// (issue 12, defects 3, 4, 6, 8; docs/rest.md).
const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

function serve(args: string[], cwd: string): Spawned {
  return spawnProcess([FLOWCTL_BIN, 'serve', 'hello', ...args], { cwd, env: { FLOWCTL_SERVE_TOKEN: undefined } });
}

function structured(a: RawAnswer): { error: string; message: string } {
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body);
  expect(body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  return body;
}

async function storedRuns(project: string): Promise<string[]> {
  return readdir(join(project, '.flowctl/runs')).catch(() => []);
}

describe('flowctl serve facing an attacker', () => {
  let project: string;

  beforeAll(async () => {
    project = await tempProject('flowctl-serve-hostile-');
    expect((await runCli(['init'], { cwd: project })).code).toBe(0);
  });

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('without a token, refuses a cross-site form post (rebound Host, foreign Origin, text/plain) and a foreign Host on GET /runs/{id}', async () => {
    const proc = serve(['--port', '0'], project);
    try {
      const port = Number((await proc.waitFor(LISTENING))[1]);
      await proc.waitFor(/Ctrl-C stops/);
      const host = `127.0.0.1:${port}`;
      // The attack of the issue, as a browser sends it after attacker.example rebinds to 127.0.0.1.
      const attack = await rawExchange(
        port,
        rawRequest(
          'POST',
          '/flows/hello/runs',
          { host: 'attacker.example', origin: 'https://attacker.example', 'content-type': 'text/plain' },
          '{"who":"pwned"}',
        ),
      );
      expect(attack.status).toBe(403);
      expect(structured(attack).error).toBe('host_not_allowed');
      const origin = await rawExchange(
        port,
        rawRequest('POST', '/flows/hello/runs', { host, origin: 'https://attacker.example', 'content-type': 'application/json' }, '{}'),
      );
      expect(origin.status).toBe(403);
      expect(structured(origin).error).toBe('origin_not_allowed');
      const form = await rawExchange(port, rawRequest('POST', '/flows/hello/runs', { host, 'content-type': 'text/plain' }, '{"who":"form"}'));
      expect(form.status).toBe(415);
      expect(structured(form).error).toBe('unsupported_media_type');
      const nullBody = await rawExchange(port, rawRequest('POST', '/flows/hello/runs', { host, 'content-type': 'application/json' }, 'null'));
      expect(nullBody.status).toBe(422);
      expect(structured(nullBody).error).toBe('invalid_inputs');
      const gzipChunked = await rawExchange(
        port,
        rawRequest('POST', '/flows/hello/runs', { host, 'content-type': 'application/json', 'transfer-encoding': 'gzip, chunked' }, '2\r\n{}\r\n0\r\n\r\n'),
      );
      expect(gzipChunked.status).toBe(415);
      expect(structured(gzipChunked).error).toBe('unsupported_encoding');
      expect(await storedRuns(project)).toEqual([]);

      // The user's own call works, and its run is readable from loopback only.
      const mine = await rawExchange(port, rawRequest('POST', '/flows/hello/runs', { host, 'content-type': 'application/json' }, '{"who":"Ada"}'));
      expect(mine.status).toBe(200);
      const run = JSON.parse(mine.body);
      expect(run.output).toEqual({ greeting: 'Hello, Ada!' });
      const rebound = await rawExchange(port, rawRequest('GET', `/runs/${run.id}`, { host: `attacker.example:${port}` }));
      expect(rebound.status).toBe(403);
      expect(rebound.body).not.toContain('Ada');
      const local = await rawExchange(port, rawRequest('GET', `/runs/${run.id}`, { host: `localhost:${port}` }));
      expect(local.status).toBe(200);
      expect(JSON.parse(local.body).id).toBe(run.id);

      // Requests Node or the URL builder refuse are answered structured too.
      for (const payload of [
        rawRequest('GET', '/flows\\hello', { host }),
        rawRequest('GET', '/runs/\xff', { host }),
        rawRequest('GET', '/flows', { host, 'x-big': 'b'.repeat(70 * 1024) }),
        rawRequest('B@D', '/flows', { host }),
      ]) {
        const a = await rawExchange(port, payload);
        expect(a.status! >= 400 && a.status! < 500).toBe(true);
        structured(a);
      }
      expect((await storedRuns(project)).length).toBe(1);
      expect((await proc.stop('SIGTERM')).code).toBe(0);
      // Each refused request is logged like any other (the router saw it), the parser-level ones are not.
      expect(proc.stderr()).toContain('POST /flows/hello/runs 403');
    } finally {
      await proc.stop('SIGKILL');
    }
  });

  it('caps open connections (--max-connections=<n>): past the cap a connection is closed unanswered, freed slots are reused', async () => {
    const proc = serve(['--port', '0', '--max-connections=2'], project);
    const held: { close(): void }[] = [];
    try {
      const port = Number((await proc.waitFor(LISTENING))[1]);
      const keepAlive = rawRequest('GET', '/flows', { host: `127.0.0.1:${port}`, connection: 'keep-alive' });
      for (let i = 0; i < 2; i++) {
        const h = await holdConnection(port, keepAlive);
        expect(h.answer.status).toBe(200);
        held.push(h);
      }
      const refused = await rawExchange(port, keepAlive);
      expect(refused.closedByServer).toBe(true);
      expect(refused.status).toBeUndefined();
      for (const h of held) h.close();
      const again = await waitUntil(
        async () => {
          const a = await rawExchange(port, rawRequest('GET', '/flows', { host: `127.0.0.1:${port}` }));
          return a.status === 200 && a;
        },
        { what: 'serve to accept a connection once the held ones closed' },
      );
      expect(JSON.parse(again.body).flows.map((f: { name: string }) => f.name)).toEqual(['hello']);
      expect((await proc.stop('SIGTERM')).code).toBe(0);
    } finally {
      for (const h of held) h.close();
      await proc.stop('SIGKILL');
    }
  });

  it('refuses a bad --max-connections with exit 2, nothing bound', async () => {
    for (const flag of ['--max-connections=0', '--max-connections=lots', '--max-connections']) {
      const r = await runCli(['serve', 'hello', '--port', '0', flag], { cwd: project, timeoutMs: 30_000 });
      expect({ flag, code: r.code }).toEqual({ flag, code: 2 });
      expect(r.stderr).toContain('--max-connections must be an integer');
      expect(r.stderr).not.toContain('listening on');
    }
  });
});
