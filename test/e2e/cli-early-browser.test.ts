import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBrowser } from '../../adapters/executor-playwright/resolve-browser.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { startSite, type SiteServer } from '../helpers/site-server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The early browser start of the spawned `flowctl run` (cli/early-browser.ts, docs/cli.md "Start-up
 * work"): a cached browser flow that surely starts launches Chromium before the rest of flowctl loads
 * and runs in it; a run that cannot start still launches nothing, and one refused at the prompt closes
 * what it launched. Chromium is a wrapper that notes each launch in a file, then execs the real one.
 */

let site: SiteServer;
let project: string;
let launches: string;
let env: Record<string, string>;

beforeAll(async () => {
  site = await startSite({ password: 'unused-here' });
  project = await tempProject('flowctl-early-browser-');
  launches = join(project, 'launches.log');
  const { executablePath } = await resolveBrowser();
  const wrapper = join(project, 'chromium.sh');
  await writeFile(wrapper, `#!/bin/sh\necho launch >> ${JSON.stringify(launches)}\nexec ${JSON.stringify(executablePath)} "$@"\n`);
  await chmod(wrapper, 0o755);
  env = { CHROMIUM_PATH: wrapper };
  await writeFile(
    join(project, 'ops.json'),
    JSON.stringify([
      { kind: 'navigate', url: `${site.url}/` },
      { kind: 'extract', target: 'h1', name: 'title' },
    ]),
  );
  const rec = await runCli(['record', '--name', 'title', '--task', 'Read the title', '--ops', 'ops.json'], { cwd: project, env });
  expect(rec.code, rec.stderr).toBe(0);
});

afterAll(async () => {
  await site?.close();
});

async function launchCount(): Promise<number> {
  const text = await readFile(launches, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

describe('flowctl run starts Chromium early only for a run that surely starts', () => {
  it('runs the first time (compiled) and again from the cache, one launch each', async () => {
    for (const round of [1, 2]) {
      const r = await runCli(['run', 'title', '--yes', '--json'], { cwd: project, env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: { title: 'Shelf' } });
      expect(await launchCount()).toBe(round);
    }
  });

  it('launches nothing for --dry or for inputs the flow does not take', async () => {
    const before = await launchCount();
    const dry = await runCli(['run', 'title', '--dry'], { cwd: project, env });
    expect(dry.code, dry.stderr).toBe(0);
    const bad = await runCli(['run', 'title', '--yes', '--input', 'who=x'], { cwd: project, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('who is not a declared input');
    expect(await launchCount()).toBe(before);
  });

  it('closes the browser it started when the run is refused at the confirmation', async () => {
    const before = await launchCount();
    // No --yes and no terminal: the outward step is not confirmed (exit 3), the process still ends.
    const r = await runCli(['run', 'title'], { cwd: project, env });
    expect(r.code, r.stderr).toBe(3);
    expect(await launchCount()).toBe(before + 1);
  });
});

/** Live processes whose environment holds `mark` (a zombie's environment is empty: it is gone). */
async function processesMarked(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(`FLOWCTL_TEST_MARK=${mark}`)) found.push(Number(name));
  }
  return found;
}

describe('flowctl run ends its browser with the process (docs/browser.md, "Ending the browser")', () => {
  for (const exit of ['default', 'close']) {
    it(`leaves no Chromium process and no profile folder behind (FLOWCTL_BROWSER_EXIT ${exit})`, async () => {
      const tmp = await tempProject('flowctl-browser-exit-');
      const mark = `${process.pid}-${exit}-${Date.now()}`;
      const extra: Record<string, string> = { TMPDIR: tmp, FLOWCTL_TEST_MARK: mark, ...(exit === 'close' ? { FLOWCTL_BROWSER_EXIT: 'close' } : {}) };
      const r = await runCli(['run', 'title', '--yes', '--json'], { cwd: project, env: { ...env, ...extra } });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: { title: 'Shelf' } });
      // Killed as the process exits: gone at once but for Chromium's crash handler, which follows.
      await waitUntil(async () => (await processesMarked(mark)).length === 0, { what: `the Chromium processes of the run (marked ${mark}) to end` });
      expect((await readdir(tmp)).filter((n) => n.startsWith('playwright'))).toEqual([]);
    });
  }
});
