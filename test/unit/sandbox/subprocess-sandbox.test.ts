import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubprocessSandbox } from '../../../adapters/sandbox-subprocess/index.js';
import { callWorker, locateWorker } from '../../../adapters/sandbox-subprocess/worker-process.js';
import { FlowError } from '../../../src/errors.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { contractDigest, defineTool } from '../../../src/tools/contract.js';
import { createSandbox, listSandboxProviders } from '../../../cli/sandbox.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';
import type { Tool } from '../../../src/tools/types.js';
import { waitGone, waitUntil, withGrowingLimit } from '../../helpers/wait.js';

const tools = Object.fromEntries(builtinTools().map((t) => [t.contract.ref, t])) as Record<string, Tool>;
let parent: string; // where sandbox roots are created
let project: string; // the parent process's own cwd for tools

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'flowctl-sbx-parent-'));
  project = await mkdtemp(join(tmpdir(), 'flowctl-sbx-project-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
  await rm(project, { recursive: true, force: true });
});

describe('the subprocess provider', () => {
  const sandbox = createSubprocessSandbox({ root: undefined, timeoutMs: 20_000 });

  it('is named subprocess and takes fs and spawn tools without net or browser', () => {
    expect(sandbox.name).toBe('subprocess');
    const taken = builtinTools()
      .filter((t) => sandbox.accepts(t))
      .map((t) => t.contract.ref)
      .sort();
    expect(taken).toEqual(['fs/read', 'fs/write', 'shell/exec']);
    const mixed = defineTool({ ...tools['fs/read']!.contract, ref: 'test/fetch-to-file', capabilities: ['fs', 'net'] }, async () => ({}));
    expect(sandbox.accepts(mixed)).toBe(false);
  });

  it('runs in a temporary root shared by the steps of one run, re-reports effects, and removes the root at run end', async () => {
    const box = createSubprocessSandbox({ root: parent });
    const ctx = createTestToolContext({ cwd: project });
    const written = await box.execute(tools['fs/write']!, { path: 'out/a.txt', content: 'from step 1' }, ctx);
    expect(written).toMatchObject({ path: 'out/a.txt', bytes: 11 });
    const read = await box.execute(tools['fs/read']!, { path: 'out/a.txt' }, { ...ctx, stepId: 'step-2' });
    expect(read).toMatchObject({ content: 'from step 1' });
    expect(ctx.effects).toEqual([{ kind: 'fs', target: 'out/a.txt' }]);

    // Confined: nothing in the project, one root under the parent holding the file.
    expect(await readdir(project)).toEqual([]);
    const roots = await readdir(parent);
    expect(roots).toHaveLength(1);
    expect(roots[0]).toMatch(/^flowctl-sandbox-/);
    expect(await readFile(join(parent, roots[0]!, 'out/a.txt'), 'utf8')).toBe('from step 1');

    // Another run gets another root.
    const other = createTestToolContext({ cwd: project });
    await expect(box.execute(tools['fs/read']!, { path: 'out/a.txt' }, other)).rejects.toMatchObject({ code: 'fs_not_found' });
    expect(await readdir(parent)).toHaveLength(2);

    await ctx.close();
    await other.close();
    expect(await readdir(parent)).toEqual([]);
  });

  it('runs shell/exec in the root with a minimal environment', async () => {
    process.env.FLOWCTL_TEST_PARENT_SECRET = 'do-not-leak';
    const ctx = createTestToolContext({ cwd: project });
    try {
      const out = (await sandbox.execute(
        tools['shell/exec']!,
        { command: 'sh', args: ['-c', 'pwd; echo "$HOME"; echo "${FLOWCTL_TEST_PARENT_SECRET:-absent}"; echo "$GIVEN"'], env: { GIVEN: 'given' } },
        ctx,
      )) as { stdout: string; exit_code: number };
      const [pwd, home, secret, given] = out.stdout.trim().split('\n');
      expect(pwd).toMatch(/flowctl-sandbox-/);
      expect(home).toBe(pwd);
      expect(pwd).not.toBe(project);
      expect(secret).toBe('absent');
      expect(given).toBe('given');
      expect(ctx.effects).toEqual([{ kind: 'spawn', target: 'sh' }]);
    } finally {
      delete process.env.FLOWCTL_TEST_PARENT_SECRET;
      await ctx.close();
    }
  });

  it('returns tool errors as FlowErrors with their code and data', async () => {
    const ctx = createTestToolContext();
    const err = await sandbox.execute(tools['fs/read']!, { path: '../escape.txt' }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlowError);
    expect(err).toMatchObject({ code: 'fs_path_outside_root', data: { retryable: false } });
    await expect(sandbox.execute(tools['shell/exec']!, { command: 'sh', args: ['-c', 'exit 4'] }, ctx)).rejects.toMatchObject({
      code: 'exec_failed',
      data: { exit_code: 4 },
    });
    await ctx.close();
  });

  it('kills a call that passes the time limit with sandbox_timeout, including what it spawned', async () => {
    // The script publishes its own pid and its background sleep's (write, then rename: whole or
    // absent), then waits. The check needs both pids, so the limit must outlast the worker's start and
    // the script's: an attempt whose limit struck first is run again with twice the limit.
    const script = 'sleep 30 </dev/null >/dev/null 2>&1 & echo "$$ $!" > pids.tmp && mv pids.tmp pids; wait';
    const pids = await withGrowingLimit(2500, async (limit) => {
      const roots = await mkdtemp(join(parent, 'timeout-'));
      const box = createSubprocessSandbox({ root: roots, timeoutMs: limit, graceMs: 500 });
      const ctx = createTestToolContext();
      try {
        const err = await box.execute(tools['shell/exec']!, { command: 'sh', args: ['-c', script] }, ctx).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'sandbox_timeout', data: { retryable: true, timeout_ms: limit } });
        const [root] = await readdir(roots);
        const file = join(roots, root!, 'pids');
        if (!existsSync(file)) return undefined;
        return (await readFile(file, 'utf8')).trim().split(' ').map(Number);
      } finally {
        await ctx.close();
      }
    });
    expect(pids).toHaveLength(2);
    // SIGKILL delivery and reaping are asynchronous: wait for each to be gone (capped).
    for (const [i, pid] of pids.entries()) await waitGone(pid, `${['sh', 'its background sleep'][i]} (${pid}) to be killed`);
  });

  it('stops when ctx.signal aborts and throws the abort reason, killing the running command', async () => {
    const controller = new AbortController();
    const reason = new FlowError('run_canceled', 'canceled by the caller');
    const roots = await mkdtemp(join(parent, 'abort-'));
    const box = createSubprocessSandbox({ root: roots, timeoutMs: 120_000 });
    const ctx = createTestToolContext({ signal: controller.signal });
    const call = box.execute(tools['shell/exec']!, { command: 'sh', args: ['-c', 'echo $$ > pid.tmp && mv pid.tmp pid; exec sleep 30'] }, ctx);
    // Abort once the command is surely running: its pid file is in the run's sandbox root.
    const pidFile = await waitUntil(
      async () => {
        const [root] = await readdir(roots);
        return root !== undefined && existsSync(join(roots, root, 'pid')) && join(roots, root, 'pid');
      },
      { what: 'the sandboxed command to write its pid' },
    );
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    await waitGone(pid, 'the aborted command to be killed');
    await ctx.close();
  });

  it('takes only built-ins it can load by ref, and refuses anything else', async () => {
    const custom = defineTool({ ...tools['fs/write']!.contract, ref: 'acme/write', description: 'A pack tool.' }, async () => ({}));
    const changed = defineTool({ ...tools['fs/write']!.contract, description: 'Same ref, other contract.' }, async () => ({}));
    expect(sandbox.accepts(custom)).toBe(false);
    expect(sandbox.accepts(changed)).toBe(false);
    const ctx = createTestToolContext();
    await expect(sandbox.execute(custom, { path: 'a', content: 'b' }, ctx)).rejects.toMatchObject({ code: 'sandbox_unsupported_tool' });
    await expect(sandbox.execute(changed, { path: 'a', content: 'b' }, ctx)).rejects.toMatchObject({ code: 'sandbox_unsupported_tool' });
    await expect(sandbox.execute(tools['http/request']!, { url: 'http://127.0.0.1:1/' }, ctx)).rejects.toMatchObject({
      code: 'sandbox_unsupported_tool',
    });
    await ctx.close();
  });

  it('confines the worker process itself with the permission model', async () => {
    // Ask the worker to use a directory outside its root as cwd: the tool's own checks pass (the path is
    // relative to that cwd), and only the OS-level permission model stands in the way.
    const root = await mkdtemp(join(parent, 'perm-root-'));
    const elsewhere = await mkdtemp(join(tmpdir(), 'flowctl-sbx-elsewhere-'));
    await writeFile(join(elsewhere, 'secret.txt'), 'secret');
    const fsRead = tools['fs/read']!;
    const call = (cwd: string, tool: Tool, input: unknown) =>
      callWorker(
        {
          type: 'call',
          ref: tool.contract.ref,
          version: tool.contract.version,
          contract_digest: contractDigest(tool.contract),
          input,
          ctx: { runId: 'r', stepId: 's', attempt: 1, timeoutMs: 10_000, cwd },
        },
        {
          root,
          allowSpawn: false,
          timeoutMs: 10_000,
          graceMs: 500,
          signal: new AbortController().signal,
          abortReason: () => new Error('x'),
          onMessage: () => {},
        },
      );
    try {
      expect(await call(elsewhere, fsRead, { path: 'secret.txt' })).toMatchObject({ ok: false, error: { code: 'sandbox_denied' } });
      expect(await call(elsewhere, tools['fs/write']!, { path: 'new.txt', content: 'x' })).toMatchObject({ ok: false, error: { code: 'sandbox_denied' } });
      expect(existsSync(join(elsewhere, 'new.txt'))).toBe(false);
      await writeFile(join(root, 'inside.txt'), 'inside');
      expect(await call(root, fsRead, { path: 'inside.txt' })).toMatchObject({ ok: true, output: { content: 'inside' } });
      // No spawn permission for a tool that does not declare spawn.
      const exec = tools['shell/exec']!;
      expect(await call(root, exec, { command: 'true' })).toMatchObject({ ok: false, error: { code: 'sandbox_denied' } });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
      await rm(root, { recursive: true, force: true });
    }
  });

  it('has the worker itself refuse a tool that is not a built-in with the same contract', async () => {
    const root = await mkdtemp(join(parent, 'unsupported-'));
    try {
      const write = tools['fs/write']!.contract;
      const answer = await callWorker(
        {
          type: 'call',
          ref: write.ref,
          version: write.version,
          contract_digest: contractDigest({ ...write, description: 'another contract' }),
          input: { path: 'a', content: 'b' },
          ctx: { runId: 'r', stepId: 's', attempt: 1, timeoutMs: 10_000, cwd: root },
        },
        {
          root,
          allowSpawn: false,
          timeoutMs: 10_000,
          graceMs: 500,
          signal: new AbortController().signal,
          abortReason: () => new Error('x'),
          onMessage: () => {},
        },
      );
      expect(answer).toMatchObject({ ok: false, error: { code: 'sandbox_unsupported_tool' } });
      expect(await readdir(root)).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('runs from sources with the worker beside it', () => {
    expect(locateWorker().script).toMatch(/adapters[/\\]sandbox-subprocess[/\\]worker\.ts$/);
  });
});

describe("sandbox providers (the CLI's table, cli/sandbox.ts)", () => {
  it('lists and creates the known providers', () => {
    expect(listSandboxProviders()).toEqual(['subprocess']);
    expect(createSandbox('subprocess').name).toBe('subprocess');
  });

  it('refuses an unknown provider, naming the known ones', () => {
    const err = (() => {
      try {
        createSandbox('firecracker');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FlowError);
    expect(err).toMatchObject({ code: 'unknown_sandbox', data: { name: 'firecracker', known: ['subprocess'] } });
    expect((err as Error).message).toContain('known providers: subprocess');
    expect(() => createSandbox('toString')).toThrow(expect.objectContaining({ code: 'unknown_sandbox' }));
  });
});

describe('the built package', () => {
  // test/global-setup.ts builds dist/ when it is stale. A plain Node process (no vitest transform) loads
  // the built entries, as a user would: the worker must be found from the adapter entries (ESM, CJS).
  // The CLI's bundle, where the sandbox code sits in a chunk of dist/cli/, is driven by
  // test/e2e/cli-run.test.ts ("flowctl run --sandbox").
  const dist = join(import.meta.dirname, '../../../dist');

  function runNode(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, args, { cwd: parent, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout, stderr });
      });
    });
  }

  const body = (load: string) => `
    ${load}
    const tools = Object.fromEntries(core.builtinTools().map((t) => [t.contract.ref, t]));
    const effects = [];
    const scope = ports.createRunScope();
    const ctx = { runId: 'r', stepId: 's', attempt: 1, signal: new AbortController().signal, timeoutMs: 10000,
      cwd: process.cwd(), effect: (e) => effects.push(e), warn() {}, scope, logger: { debug() {}, info() {}, warn() {} } };
    (async () => {
      await box.execute(tools['fs/write'], { path: 'built.txt', content: 'from dist' }, ctx);
      const read = await box.execute(tools['shell/exec'], { command: 'cat', args: ['built.txt'] }, ctx);
      await scope.dispose();
      console.log(JSON.stringify({ name: box.name, stdout: read.stdout, effects }));
    })().catch((e) => { console.error(e); process.exit(1); });`;

  it.each([
    [
      'ESM adapter',
      [
        '--input-type=module',
        '-e',
        body(`import * as core from '${pathToFileURL(join(dist, 'index.js')).href}';
      import * as ports from '${pathToFileURL(join(dist, 'ports.js')).href}';
      import { createSubprocessSandbox } from '${pathToFileURL(join(dist, 'adapters/sandbox-subprocess.js')).href}';
      const box = createSubprocessSandbox();`),
      ],
    ],
    [
      'CJS adapter',
      [
        '--input-type=commonjs',
        '-e',
        body(`const core = require(${JSON.stringify(join(dist, 'index.cjs'))});
      const ports = require(${JSON.stringify(join(dist, 'ports.cjs'))});
      const box = require(${JSON.stringify(join(dist, 'adapters/sandbox-subprocess.cjs'))}).createSubprocessSandbox();`),
      ],
    ],
  ])('runs fs and shell tools from the %s', async (_label, args) => {
    expect(existsSync(join(dist, 'adapters/sandbox-subprocess-worker.js')), 'dist is missing: run npm run build').toBe(true);
    const r = await runNode(args as string[]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      name: 'subprocess',
      stdout: 'from dist',
      effects: [
        { kind: 'fs', target: 'built.txt' },
        { kind: 'spawn', target: 'cat' },
      ],
    });
    // The run's sandbox root is gone, and nothing was written where the process ran.
    expect(existsSync(join(parent, 'built.txt'))).toBe(false);
  });
});
