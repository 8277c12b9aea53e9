import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowctl, project } from './cli-run-helpers.js';

// A secret typed into a real page (Chromium) that echoes it back: the CLI must show `***` on every
// stream and in every file it writes, while the run itself works.
const CANARY = 'canary-7f3e-secret-value';
const PAGE = `<!doctype html><title>echo</title>
<input id="pw" oninput="document.getElementById('echo').textContent = 'typed:' + this.value">
<div id="echo"></div>`;
const FLOW = `name: secretecho
inputs:
  url:
    type: string
  password:
    type: string
    secret: true
steps:
  - id: open
    tool: browser/navigate@1
    args:
      url: \${inputs.url}
  - id: type
    tool: browser/fill@1
    args:
      target: "#pw"
      value: \${inputs.password}
      mask: true
  - id: read
    tool: browser/extract@1
    args:
      target: "#echo"
output:
  echoed: \${steps.read.output.value}
`;

let server: Server;
let url: string;
let dir: string;
const env = { FLOWCTL_SECRET_PASSWORD: CANARY };

async function allFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out;
}

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  dir = await project();
  await writeFile(join(dir, 'flows', 'secretecho.yaml'), FLOW);
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('secrets through the CLI', () => {
  it('run, inspect and replay show *** on every stream and in every file; the run still works', async () => {
    const seen: string[] = [];
    const run = await flowctl(dir, ['run', 'secretecho', '--yes', '--input', `url=${url}`, '--record-journal', 'secret.json', '--json'], { env });
    seen.push(run.stdout, run.stderr);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    // the page saw the real value (it echoed something), the CLI shows only the mask
    expect(result.output).toEqual({ echoed: 'typed:***' });
    expect(result.journal[0].inputs.password).toBe('secret:password');
    const plain = await flowctl(dir, ['run', 'secretecho', '--yes', '--input', `url=${url}`], { env });
    seen.push(plain.stdout, plain.stderr);
    expect(plain.stdout).toBe('{\n  "echoed": "typed:***"\n}\n');

    for (const args of [
      ['inspect', result.id],
      ['inspect', result.id, '--json'],
      ['inspect', result.id, '--step', 'type'],
      ['inspect', result.id, '--step', 'read', '--json'],
      ['runs'],
    ]) {
      const r = await flowctl(dir, args, { env });
      expect(r.code, r.stderr).toBe(0);
      seen.push(r.stdout, r.stderr);
    }
    const verify = await flowctl(dir, ['replay', 'secret.json', '--verify'], { env });
    seen.push(verify.stdout, verify.stderr);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain('typed:***');

    for (const text of seen) expect(text).not.toContain(CANARY);
    for (const file of await allFiles(dir)) expect(await readFile(file, 'utf8'), file).not.toContain(CANARY);
    expect(await readFile(join(dir, 'secret.json'), 'utf8')).toContain('typed:***');
  });

  it('a secret value given as a plain --input is refused and never echoed', async () => {
    const r = await flowctl(dir, ['run', 'secretecho', '--yes', '--input', `url=${url}`, '--input', `password=${CANARY}`, '--json'], { env: {} });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('invalid_inputs');
    expect(r.stderr).toMatch(/password is a secret input/);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
  });

  it('a missing secret is refused before the run starts, exit 2 (issue 12)', async () => {
    const r = await flowctl(dir, ['run', 'secretecho', '--yes', '--json', '--input', `url=${url}`], { env: { FLOWCTL_SECRET_PASSWORD: undefined } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('secret_not_found');
    expect(r.stderr).toMatch(/FLOWCTL_SECRET_PASSWORD/);
    expect(r.stderr).toMatch(/no run started/);
  });

  it('an empty secret (FLOWCTL_SECRET_PASSWORD=) is refused as a missing one: exit 2, secret_not_found, no run (issue 26)', async () => {
    const before = (await flowctl(dir, ['runs'])).stdout;
    const r = await flowctl(dir, ['run', 'secretecho', '--yes', '--json', '--input', `url=${url}`], { env: { FLOWCTL_SECRET_PASSWORD: '' } });
    expect(r.code, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'secret_not_found',
      data: { issues: [{ path: 'password', message: expect.stringContaining('FLOWCTL_SECRET_PASSWORD') }] },
    });
    expect(r.stderr).toMatch(
      /input "password" needs secret:password, which does not resolve: .*set but empty \(environment variable FLOWCTL_SECRET_PASSWORD\)/,
    );
    expect(r.stderr).toMatch(/no run started/);
    const plain = await flowctl(dir, ['run', 'secretecho', '--yes', '--input', `url=${url}`], { env: { FLOWCTL_SECRET_PASSWORD: '' } });
    expect([plain.code, plain.stdout]).toEqual([2, '']);
    expect(plain.stderr).toMatch(/set but empty/);
    expect((await flowctl(dir, ['runs'])).stdout).toBe(before);
  });
});
