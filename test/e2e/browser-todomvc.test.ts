import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { startStaticServer, type StaticServer } from '../helpers/static-server.js';

/**
 * Real single-page applications we did not write: the TodoMVC implementations of the `todomvc` npm
 * package (a devDependency), served as they ship on 127.0.0.1. One ops file (test/fixtures/todomvc/
 * ops.yaml) does a task that needs press Enter, check, hover to reveal a delete button and a
 * double-click to edit; it is recorded for each app with the real CLI and run in Chromium with two
 * input sets, outputs checked; one run per app is replayed with --verify without a browser.
 */

const TODOMVC_DIR = resolve(import.meta.dirname, '../../node_modules/todomvc');
/** Four frameworks: plain DOM, Backbone with jQuery, AngularJS, React (JSX compiled in the page). */
const APPS = ['vanillajs', 'backbone', 'angularjs', 'react'] as const;

const INPUTS = [
  { flags: [] as string[], first: 'Buy milk', second: 'Write report', edited: 'Buy oat milk' },
  {
    flags: ['--input', 'first=Feed the cat', '--input', 'second=Pay rent', '--input', 'third=Water plants', '--input', 'edited=Feed both cats'],
    first: 'Feed the cat',
    second: 'Pay rent',
    edited: 'Feed both cats',
  },
];

let server: StaticServer;
let project: string;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: project, env, timeoutMs: 120_000 });

beforeAll(async () => {
  server = await startStaticServer(TODOMVC_DIR);
  project = await tempProject('flowctl-todomvc-');
  await mkdir(join(project, 'ops'), { recursive: true });
  const template = await readFile(resolve(import.meta.dirname, '../fixtures/todomvc/ops.yaml'), 'utf8');
  for (const app of APPS) await writeFile(join(project, `ops/${app}.yaml`), template.replaceAll('{{APP}}', `${server.url}/examples/${app}/index.html`));
});

afterAll(async () => {
  await server?.close();
});

describe.each(APPS)('TodoMVC %s from npm', (app) => {
  const name = `todo-${app}`;
  const runIds: string[] = [];

  it('records the task and compiles it', async () => {
    const r = await cli([
      'record',
      '--name',
      name,
      '--task',
      `Manage todos in the ${app} TodoMVC`,
      '--ops',
      `ops/${app}.yaml`,
      '--input',
      'first',
      '--input',
      'second',
      '--input',
      'third',
      '--input',
      'edited',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const compiled = await cli(['compile', name, '--check']);
    expect(compiled.code, compiled.stderr).toBe(0);
    // Positional selectors are what a todo list offers: lint says so, as a style finding only.
    const linted = await cli(['lint', name]);
    expect(linted.code).toBe(0);
  });

  it.each(INPUTS.map((input, i) => [i + 1, input] as const))('runs with input set %i and gets the list it made', async (_n, input) => {
    const r = await cli(['run', name, '--yes', '--json', ...input.flags]);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ items: [input.edited, input.second], done: [input.second], left: '1 item left' });
    // No fallback was needed and nothing was left waiting on.
    expect(r.stderr).not.toMatch(/drift|going on/);
    runIds.push(run.id);
  });

  it('replays a run with --verify without a browser', async () => {
    const r = await cli(['replay', runIds[1]!, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: { items: [INPUTS[1]!.edited, INPUTS[1]!.second] } });
  });
});
