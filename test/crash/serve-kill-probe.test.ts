import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOWCTL_BIN, runCli, tempProject } from '../helpers/cli.js';
import { spawnProcess } from '../e2e/rest-helpers.js';

// Kill probe for `flowctl serve` (issue 13: "60 of 570 serve runs stayed running for good"): a batch
// of async runs, each held inside an http/request step by a loopback server that never answers,
// then SIGKILL of serve. The next open of the store (`flowctl runs --json`) must find every run
// terminal: failed worker_lost with run_finished, none pending or running. On the fs store and on
// the PGlite store (--store=sql). Everything waits on events: the held requests arriving, the exit.

const RUNS = 24;
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

let hold: { url: string; arrived: () => number; waitFor: (n: number) => Promise<void>; close: () => Promise<void> };

beforeAll(async () => {
  const held: ServerResponse[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((_req, res) => {
    held.push(res); // never answered while the probe runs
    for (const w of waiters.filter((w) => held.length >= w.n)) w.resolve();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hold = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`,
    arrived: () => held.length,
    waitFor: (n) => (held.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
});
afterAll(async () => {
  await hold?.close();
});

describe.each([
  { store: 'fs', args: [] as string[] },
  { store: 'PGlite', args: ['--store=sql'] },
])('kill probe: SIGKILL of flowctl serve with $store runs in flight', ({ args }) => {
  it(`leaves none of ${RUNS} in-flight runs non-terminal after the next open`, async () => {
    const project = await tempProject('flowctl-serve-kill-');
    try {
      expect((await runCli(['init'], { cwd: project })).code).toBe(0);
      await writeFile(
        join(project, 'flows', 'held.yaml'),
        `name: held\nsteps:\n  - id: ask\n    tool: http/request@1\n    args:\n      url: ${hold.url}\n      timeout_ms: 600000\n`,
      );
      const before = hold.arrived();
      const proc = spawnProcess([FLOWCTL_BIN, 'serve', 'held', '--port', '0', ...args], {
        cwd: project,
        env: { FLOWCTL_SERVE_TOKEN: undefined, DATABASE_URL: undefined },
      });
      let ids: string[] = [];
      try {
        const base = (await proc.waitFor(LISTENING))[1]!;
        const started = await Promise.all(
          Array.from({ length: RUNS }, async () => {
            const res = await fetch(`${base}/flows/held/runs?mode=async`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
            expect(res.status).toBe(202);
            return ((await res.json()) as { run_id: string }).run_id;
          }),
        );
        ids = started;
        await hold.waitFor(before + RUNS); // every run is inside its step
      } finally {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }

      // The next open: serve again over the same store. Its start sweep ends the dead serve's runs.
      const again = spawnProcess([FLOWCTL_BIN, 'serve', 'held', '--port', '0', ...args], {
        cwd: project,
        env: { FLOWCTL_SERVE_TOKEN: undefined, DATABASE_URL: undefined },
      });
      const ours: { id: string; status: string; journal: { event: string; error?: { code: string } }[] }[] = [];
      try {
        const base = (await again.waitFor(LISTENING))[1]!;
        for (const id of ids) {
          // Bounded: the sweep at start is asynchronous; a run still shown running is asked again.
          for (let attempt = 0; attempt < 600; attempt++) {
            const run = (await (await fetch(`${base}/runs/${id}`)).json()) as (typeof ours)[number];
            if (run.status !== 'pending' && run.status !== 'running') {
              ours.push(run);
              break;
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      } finally {
        await again.stop('SIGTERM');
      }
      expect(ours).toHaveLength(RUNS);
      const nonTerminal = RUNS - ours.length;
      const statuses = Object.fromEntries(['failed', 'succeeded', 'canceled'].map((s) => [s, ours.filter((r) => r.status === s).length]));
      expect(statuses.failed).toBe(RUNS);
      for (const run of ours) expect(run.journal.at(-1)).toMatchObject({ event: 'run_finished', error: { code: 'worker_lost' } });
      if (args.length === 0) {
        // fs: the CLI reads the same store; replay reports worker_lost, not a divergence.
        const replay = await runCli(['replay', ids[0]!, '--verify', '--json'], { cwd: project, timeoutMs: 120_000 });
        expect(replay.stdout + replay.stderr).toContain('worker_lost');
        expect(replay.stdout + replay.stderr).not.toContain('replay_divergence');
      }
      console.log(
        `[serve-kill-probe] ${args.join(' ') || 'fs'}: ${RUNS} runs in flight at SIGKILL; after the next open: ${nonTerminal} non-terminal, ${JSON.stringify(statuses)}`,
      );
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
