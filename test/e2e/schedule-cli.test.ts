import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWCTL_BIN, runCli, tempProject } from '../helpers/cli.js';

// `flowctl schedule` spawned for real: fires on a seconds-field cron, logs run ids, stops on SIGTERM.
const HELLO = `name: hello
inputs:
  who: {type: string, default: world}
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello, {{ who }}!"
      values: {who: "\${inputs.who}"}
output:
  greeting: \${steps.greet.output.text}
`;
// Takes about 1.5 s per run, so every-second fires overlap it.
const SLOW = `name: slow
steps:
  - id: wait
    tool: shell/exec@1
    args: {command: node, args: ["-e", "setTimeout(() => {}, 1500)"]}
`;
const SAVE = `name: save
steps:
  - {id: write, tool: fs/write@1, args: {path: out.txt, content: x}}
`;

let dir: string;
beforeAll(async () => {
  dir = await tempProject('flowctl-schedule-');
  await mkdir(join(dir, 'flows'));
  await writeFile(join(dir, 'flows', 'hello.yaml'), HELLO);
  await writeFile(join(dir, 'flows', 'slow.yaml'), SLOW);
  await writeFile(join(dir, 'flows', 'save.yaml'), SAVE);
});

const RUN_LINE = /run ([0-9a-f-]{36}) (succeeded|failed|canceled)/g;

/**
 * Start `flowctl schedule ...`, wait (bounded) until stderr matches `until`, send SIGTERM, and
 * collect the exit. The waits are bounds on a hang (below the 120 s test timeout), never assertions
 * about timing: every wait ends on a line the scheduler prints.
 */
function scheduleUntil(args: string[], until: (stderr: string) => boolean, boundMs = 90_000) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; reached: boolean }>((resolve, reject) => {
    const child = spawn(process.execPath, [FLOWCTL_BIN, 'schedule', ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let reached = false;
    const stop = () => child.kill('SIGTERM');
    const bound = setTimeout(stop, boundMs);
    const hardBound = setTimeout(() => child.kill('SIGKILL'), boundMs + 20_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (!reached && until(stderr)) {
        reached = true;
        stop();
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      clearTimeout(hardBound);
      resolve({ code, signal, stdout, stderr, reached });
    });
  });
}

describe('flowctl schedule', () => {
  it('a seconds-field cron fires at least twice with run ids, then SIGTERM stops it cleanly (exit 0)', async () => {
    const r = await scheduleUntil(['hello', '--cron', '*/1 * * * * *', '--input', 'who=Cron'], (s) => [...s.matchAll(RUN_LINE)].length >= 2);
    expect(r.reached, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const runs = [...r.stderr.matchAll(RUN_LINE)];
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.every((m) => m[2] === 'succeeded')).toBe(true);
    expect(new Set(runs.map((m) => m[1])).size).toBe(runs.length);
    expect(r.stderr).toMatch(/SIGTERM, stopping after the run in flight/);
    expect(r.stderr).toMatch(/stopped after \d+ fire times?/);
    // Each fired run is a stored run with the fixed inputs.
    const inspect = await runCli(['inspect', runs[0]![1]!, '--json'], { cwd: dir });
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(JSON.parse(inspect.stdout).output).toEqual({ greeting: 'Hello, Cron!' });
  });

  it('a fire that comes while the previous run is in flight is skipped; SIGTERM waits for that run', async () => {
    const r = await scheduleUntil(['slow', '--cron', '* * * * * *', '--yes'], (s) => /skipped: the previous run of slow is still in flight/.test(s));
    expect(r.reached, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(0);
    // The run in flight when SIGTERM came finished (and was logged) before the exit.
    const firing = (r.stderr.match(/ firing slow/g) ?? []).length;
    const finished = [...r.stderr.matchAll(RUN_LINE)];
    expect(firing).toBeGreaterThanOrEqual(1);
    expect(finished.length).toBe(firing);
    expect(finished.every((m) => m[2] === 'succeeded')).toBe(true);
  });

  it('an outward flow runs unattended after stating its effects once (no prompt, no TTY needed)', async () => {
    const r = await scheduleUntil(['save', '--cron', '* * * * * *'], (s) => [...s.matchAll(RUN_LINE)].length >= 1);
    expect(r.reached).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/every fire of save can have outward effects/);
    expect(r.stderr).toMatch(/file writes: +out\.txt/);
    expect([...r.stderr.matchAll(RUN_LINE)].every((m) => m[2] === 'succeeded')).toBe(true);
    expect(r.stderr).not.toMatch(/refus/);
  });

  it('with --registry and no <flow>, schedules the first flow of the registry', async () => {
    const author = await tempProject('flowctl-schedule-pack-');
    for (const args of [
      ['init'],
      ['pack', 'init', 'greeter', '--version', '1.0.0'],
      ['pack', 'add', '--body', 'flows/hello.yaml'],
      ['pack', 'publish', '--registry', 'shared'],
    ]) {
      const r = await runCli(args, { cwd: author });
      expect(r.code, r.stderr).toBe(0);
    }
    const r = await scheduleUntil(['--registry', join(author, 'shared'), '--cron', '* * * * * *'], (s) =>
      /run [0-9a-f-]{36} (succeeded|failed|canceled)/.test(s),
    );
    expect(r.reached, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('greeter@1.0.0');
    expect(r.stderr).toMatch(/run [0-9a-f-]{36} succeeded \(hello\)/);
  });

  it.each([
    [['hello'], /--cron <expr> is required/],
    [['hello', '--cron', '* * *'], /invalid cron expression "\* \* \*": it has 3 fields/],
    [['hello', '--cron', '61 * * * *'], /invalid cron expression "61 \* \* \* \*"/],
    [['hello', '--cron', '@hourly'], /invalid cron expression "@hourly"/],
    [['hello', '--cron', '* * * * *', '--input', 'nope=1'], /nope is not a declared input/],
    [['missing', '--cron', '* * * * *'], /flow "missing" not found/],
  ])('usage problems exit 2 before anything is scheduled: %j', async (args, message) => {
    const r = await runCli(['schedule', ...args], { cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/firing/);
  });
});
