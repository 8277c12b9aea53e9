import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDist } from '../crash/dist-snapshot.js';
import { postJson, spawnProcess, type Spawned } from './rest-helpers.js';

/**
 * Issue 12, defect 11: `npm start` twice. The second instance (same working dir, the same port or
 * another one) must not change anything the first one serves: not its REST answers, not the files in
 * the working dir that `flowctl mcp` and `flowctl run` there read (recordings/shop-list.json points at
 * the first instance's demo page), not the deploys in its store. It binds before it writes, and a
 * working dir in use by a live instance is refused.
 *
 * The example runs from a private copy of the build (a rebuild of dist/ by someone else cannot break
 * it), with the example's own files copied beside it, as a user would run it.
 */
let snap: Awaited<ReturnType<typeof snapshotDist>>;
let main: string;
let dir: string;
let first: Spawned | undefined;

beforeAll(async () => {
  snap = await snapshotDist();
  const example = join(snap.dist, '..', 'examples', 'engine-launcher');
  await cp(resolve(import.meta.dirname, '../../examples/engine-launcher'), example, {
    recursive: true,
    filter: (src) => !src.includes(`${'/'}.data`),
  });
  main = join(example, 'main.mjs');
  dir = await mkdtemp(join(tmpdir(), 'flowctl-start-twice-'));
}, 180_000);

afterAll(async () => {
  await first?.stop();
  await snap?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** sha256 of every file under the working dir except the run store's runs (which the test adds to). */
async function workingDirDigests(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    const rel = relative(dir, path);
    if (rel.startsWith(join('.flowctl', 'runs'))) continue;
    out[rel] = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  }
  return out;
}

async function served(base: string): Promise<{ flows: string; openapi: string }> {
  return { flows: await (await fetch(`${base}/flows`)).text(), openapi: await (await fetch(`${base}/openapi.json`)).text() };
}

describe('npm start twice (issue 12, defect 11)', () => {
  it('a second instance on the same port, or on another port in the same working dir, changes nothing the first serves', async () => {
    first = spawnProcess([main, '--port', '0', '--dir', dir], { cwd: dir });
    const base = (await first.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    await first.waitFor(/Ctrl-C stops/);
    const port = new URL(base).port;
    const files = await workingDirDigests();
    expect(Object.keys(files)).toEqual(expect.arrayContaining([join('recordings', 'shop-list.json'), join('flows', 'greet.yaml')]));
    const answers = await served(base);

    // Same port: refused on the busy port, before it writes anything.
    const second = spawnProcess([main, '--port', port, '--dir', dir], { cwd: dir });
    const exit2 = await second.exited;
    expect(exit2.code, second.stderr()).not.toBe(0);
    expect(second.stderr()).toMatch(/EADDRINUSE|in use/);
    expect(await workingDirDigests()).toEqual(files);
    expect(await served(base)).toEqual(answers);

    // Another free port, the same working dir: refused because a live instance uses the dir.
    const third = spawnProcess([main, '--port', '0', '--dir', dir], { cwd: dir });
    const exit3 = await third.exited;
    expect(exit3.code, third.stdout() + third.stderr()).not.toBe(0);
    expect(third.stderr()).toMatch(new RegExp(`another instance \\(pid ${first.child.pid}\\)`));
    expect(await workingDirDigests()).toEqual(files);
    expect(await served(base)).toEqual(answers);

    // The first still runs its flows, the Recording against its own demo page.
    const greet = await postJson(`${base}/flows/greet/runs`, { who: 'Ada', times: 2 });
    expect(greet.body.status).toBe('succeeded');
    const shop = await postJson(`${base}/flows/shop-list/runs`, { item: 'pears', aisle: 'produce' });
    expect(shop.body.status, JSON.stringify(shop.body).slice(0, 2000)).toBe('succeeded');

    // Once it stopped, the working dir is free again: a new instance starts there.
    expect((await first.stop('SIGTERM')).code).toBe(0);
    first = spawnProcess([main, '--port', '0', '--dir', dir], { cwd: dir });
    await first.waitFor(/Ctrl-C stops/);
  });
});
