import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshotDist } from '../../crash/dist-snapshot.js';

const CHILD = resolve(import.meta.dirname, 'secret-canary-child.mjs');
// Distinctive, and no substring of anything the engine writes on its own.
const CANARY = 'CANARY-9d41f0e7-plaintext-Zq';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    const p = join(dir, name);
    if ((await stat(p)).isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe('secret canary (child process, storage-fs, env secrets)', () => {
  let dir: string;
  let dist: Awaited<ReturnType<typeof snapshotDist>> | undefined;
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await dist?.cleanup();
  });

  it('never shows the plaintext in Runs, journal files, fixtures, logs, stdout or stderr', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-canary-'));
    dist = await snapshotDist();
    const child = spawn(process.execPath, [CHILD, dir], {
      env: { ...process.env, FLOWCTL_SECRET_API_TOKEN: CANARY, FLOWCTL_DIST: dist.dist },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code, stderr).toBe(0);

    // The paths really ran: success, failure and a retry, each resolving the secret.
    const runs = stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t));
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'failed', 'failed', 'succeeded', 'succeeded']);
    expect(runs[0].output.result).toEqual({ echoed: 'Bearer ***', url: 'https://api.example/?key=Bearer ***', length: `Bearer ${CANARY}`.length });
    const failed = runs[2].journal.filter((e: { event: string }) => e.event === 'step_failed');
    expect(failed.map((e: { error: { message: string } }) => e.error.message)).toEqual([
      'server rejected Bearer *** (attempt 1)',
      'server rejected Bearer *** (attempt 2)',
    ]);
    expect(runs[4].journal.filter((e: { event: string }) => e.event === 'step_started')).toHaveLength(2);
    expect(stderr).toContain('using token Bearer ***');
    expect(stdout).toContain('api.example/Bearer ***');

    const files = await filesUnder(dir);
    expect(files.some((f) => f.endsWith('journal.jsonl'))).toBe(true);
    expect(files.filter((f) => f.includes('fixture-'))).toHaveLength(3);
    for (const file of files) {
      expect((await readFile(file, 'utf8')).includes(CANARY), `plaintext in ${file}`).toBe(false);
    }
    expect(stdout.includes(CANARY), 'plaintext on stdout').toBe(false);
    expect(stderr.includes(CANARY), 'plaintext on stderr').toBe(false);
  }, 180_000); // a bound (snapshot of dist/, one child process), not a timing assertion
});
