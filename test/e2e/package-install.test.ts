import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  files: string[];
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
// Hang caps, not timing assertions: npm installs and tsc runs are slow on a loaded machine.
const CAP_MS = 300_000;
const MB = 1024 * 1024;
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];

/**
 * The package as a user gets it (issue 32): packed from the built dist/ (`npm run build` first) with
 * the README written for package users, installed from the tarball into a fresh app. Engine only:
 * small, the quick start runs in ESM and CJS, the declarations type-check strictly without
 * skipLibCheck, and an adapter without its peers fails naming them. Then with the SQL and Playwright
 * peers: a run on SQL storage, and those entries type-check. publint and attw check the tarball.
 */
const DOC = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
function docBlock(name: string): string {
  const found = new RegExp(`\`\`\`(?:js|ts)\\n// file: ${name.replace('.', '\\.')}\\n([\\s\\S]*?)\`\`\``).exec(DOC);
  if (!found?.[1]) throw new Error(`docs/library.md has no block "// file: ${name}"`);
  return found[1];
}

async function sizeOf(path: string): Promise<number> {
  const info = await lstat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry));
  return total;
}

const npm = (args: string[], cwd: string) =>
  exec('npm', args, { cwd, timeout: CAP_MS, maxBuffer: 16 * MB, env: { ...process.env, npm_config_update_notifier: 'false' } });
const node = (args: string[], cwd: string) => exec(process.execPath, args, { cwd, timeout: CAP_MS, env: { ...process.env, DATABASE_URL: '' } });

/** tsc under strict, no skipLibCheck, node16 resolution, over the given files of `app`. */
async function typeCheck(app: string, files: Record<string, string>, types: string[]): Promise<void> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(app, name), text);
  const tsconfig = {
    compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'es2022', types },
    files: Object.keys(files),
  };
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
  try {
    await exec(process.execPath, [TSC, '-p', app], { cwd: app, timeout: CAP_MS });
  } catch (err) {
    const out = err as { stdout?: string; stderr?: string };
    throw new Error(`tsc failed:\n${out.stdout ?? ''}${out.stderr ?? ''}`);
  }
}

const ENGINE_TS = `import { compile, createEngine, type Run } from 'flowctl/engine';
import type { Storage } from 'flowctl/ports';
import { loadRegistryTools } from 'flowctl/packs';
import { createMemoryStorage } from 'flowctl/adapters/storage-memory';
import { createFsStorage } from 'flowctl/adapters/storage-fs';
import { createEnvSecrets } from 'flowctl/adapters/secrets-env';
export async function go(): Promise<Run | undefined> {
  const storage: Storage = createMemoryStorage();
  void createFsStorage; void loadRegistryTools; void createEnvSecrets;
  const r = compile('name: x\\nsteps: []\\n');
  return r.ok ? createEngine({ storage }).run({ spec: r.spec }, {}) : undefined;
}
`;

const PEERS_TS = `import { compile, createEngine, createToolRegistry, builtinTools } from 'flowctl/engine';
import { createSqlStorage, createSqlServiceStorage, type SqlStorage } from 'flowctl/adapters/storage-sql';
import { createPlaywrightExecutor } from 'flowctl/adapters/executor-playwright';
export async function go(): Promise<string | undefined> {
  const sql: SqlStorage = createSqlStorage({ pglite: {} });
  void createSqlServiceStorage(sql);
  const executor = createPlaywrightExecutor();
  const tools = createToolRegistry(builtinTools(), executor.tools);
  const r = compile('name: x\\nsteps: []\\n', { tools });
  const run = r.ok ? await createEngine({ storage: sql, tools }).run({ spec: r.spec }, {}) : undefined;
  await executor.dispose();
  await sql.dispose();
  return run?.status;
}
`;

// A consumer's own assembly, on purpose: this checks what a library user writes against the packed
// package (docs/library.md), not the service npm start runs (the hosted e2e tests use that one).
const HOSTED_TS = `import { createEngine, createHostedService, type HostedService } from 'flowctl';
import { serveNodeHttp } from 'flowctl/adapters/node-http';
import { flowctlHono } from 'flowctl/adapters/hono';
import { createSqlServiceStorage, createSqlStorage } from 'flowctl/adapters/storage-sql';
export async function go(): Promise<number> {
  const sql = createSqlStorage({ pglite: {} });
  const service: HostedService = createHostedService({ storage: createSqlServiceStorage(sql), engine: createEngine({ storage: sql }) });
  void flowctlHono(service);
  const server = await serveNodeHttp(service, { port: 0 });
  const status = (await fetch(server.url + '/healthz')).status;
  await server.close();
  return status;
}
`;

describe('the packed package, installed into a fresh app', { timeout: CAP_MS }, () => {
  let work: string;
  let tarball: string;
  let app: string;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/engine.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    work = await mkdtemp(join(tmpdir(), 'flowctl-package-'));
    // Pack a copy of what package.json "files" ships, with README.package.md as its README (what
    // `npm pack` does through prepack/postpack, scripts/package-readme.mjs), leaving the checkout alone.
    const stage = join(work, 'stage');
    await mkdir(stage);
    await copyFile(join(ROOT, 'package.json'), join(stage, 'package.json'));
    for (const entry of PKG.files.filter((f) => f !== 'README.md')) await cp(join(ROOT, entry), join(stage, entry), { recursive: true });
    await copyFile(join(ROOT, 'README.package.md'), join(stage, 'README.md'));
    const { stdout } = await npm(['pack', '--ignore-scripts', '--pack-destination', work], stage);
    tarball = join(work, stdout.trim().split('\n').pop() as string);
    app = join(work, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
    await npm(['install', ...NPM_FLAGS, tarball], app);
  }, CAP_MS);
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ships the package README, the guide and no install script', async () => {
    const installed = join(app, 'node_modules/flowctl');
    expect(readFileSync(join(installed, 'README.md'), 'utf8')).toBe(readFileSync(join(ROOT, 'README.package.md'), 'utf8'));
    expect(existsSync(join(installed, 'docs/library.md'))).toBe(true);
    const scripts = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(scripts[hook], hook).toBeUndefined();
    // Every relative link of the shipped README and guide names a shipped file.
    for (const doc of ['README.md', 'docs/library.md']) {
      const text = readFileSync(join(installed, doc), 'utf8');
      for (const m of text.matchAll(/\]\((?!https?:|#)([^)#]+)/g))
        expect(existsSync(resolve(installed, doc, '..', m[1] as string)), `${doc} links ${m[1]}`).toBe(true);
    }
  });

  it('installs at most 40 MB of node_modules, and none of the optional peers', async () => {
    const size = await sizeOf(join(app, 'node_modules'));
    expect(size / MB).toBeLessThanOrEqual(40);
    for (const peer of Object.keys(PKG.peerDependencies)) expect(existsSync(join(app, 'node_modules', peer)), peer).toBe(false);
  });

  it('runs the quick start in ES modules and CommonJS', async () => {
    await writeFile(join(app, 'quickstart.mjs'), docBlock('quickstart.mjs'));
    await writeFile(join(app, 'quickstart.cjs'), docBlock('quickstart.cjs'));
    expect((await node(['quickstart.mjs'], app)).stdout.trim()).toBe('succeeded Hello, Ada!');
    expect((await node(['quickstart.cjs'], app)).stdout.trim()).toBe('succeeded Hello, Lin!');
  });

  it('runs a pure flow from the flowctl command', async () => {
    await writeFile(
      join(app, 'hello.yaml'),
      'name: hello\ninputs:\n  who: { type: string }\nsteps:\n  - id: greet\n    tool: core/template@1\n    args:\n      template: "Hi {{ who }}"\n      values: { who: "${inputs.who}" }\noutput: ${steps.greet.output.text}\n',
    );
    const { stdout } = await node([join(app, 'node_modules/flowctl/bin/flowctl.mjs'), 'run', 'hello.yaml', '--input', 'who=Ada', '--json'], app);
    expect(stdout).toContain('Hi Ada');
  });

  it('type-checks flowctl/engine and the peer-free entries strictly, from .mts and .cts, with no peers', async () => {
    await typeCheck(app, { 'engine.mts': ENGINE_TS, 'engine.cts': ENGINE_TS }, []);
  });

  it('fails at import naming the peers an adapter needs (ESM, CJS and the CLI)', async () => {
    const install = 'npm install @electric-sql/pglite kysely pg';
    const esm = await node(['--input-type=module', '-e', "import('flowctl/adapters/storage-sql').catch((e) => console.log(e.code, e.message))"], app);
    expect(esm.stdout).toContain(`missing_peer flowctl/adapters/storage-sql needs the optional peers "@electric-sql/pglite", "kysely", "pg": ${install}`);
    const cjs = await node(['-e', "try { require('flowctl/adapters/storage-sql') } catch (e) { console.log(e.code, e.data.install) }"], app);
    expect(cjs.stdout.trim()).toBe(`missing_peer ${install}`);
    const browser = await node(['--input-type=module', '-e', "import('flowctl/adapters/executor-playwright').catch((e) => console.log(e.message))"], app);
    expect(browser.stdout).toContain('needs the optional peer "playwright-core": npm install playwright-core');
    const cli = await node([join(app, 'node_modules/flowctl/bin/flowctl.mjs'), 'serve', 'hello.yaml'], app).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/^flowctl serve needs the optional peer "[^"]+": npm install \S+/);
  });

  it('with the SQL and Playwright peers: runs on SQL storage and type-checks those entries', async () => {
    const peers = ['pg', '@electric-sql/pglite', 'kysely', 'playwright-core'].map((name) => `${name}@${PKG.peerDependencies[name]}`);
    await npm(['install', ...NPM_FLAGS, ...peers], app);
    await writeFile(join(app, 'storage-sql.mjs'), docBlock('storage-sql.mjs'));
    expect((await node(['storage-sql.mjs'], app)).stdout.trim()).toBe('succeeded pong');
    await typeCheck(app, { 'peers.mts': PEERS_TS, 'peers.cts': PEERS_TS, 'engine.mts': ENGINE_TS }, []);
  });

  it('with the peers the errors name: the hosted service runs on node:http and its entries type-check', async () => {
    // What a reader does: import the entry, install what the missing_peer error asks for.
    const missing = async (entry: string) => {
      const script = `import(${JSON.stringify(entry)}).then(() => console.log('[]'), (e) => console.log(JSON.stringify(e.data?.missing ?? String(e))))`;
      return JSON.parse((await node(['--input-type=module', '-e', script], app)).stdout) as string[];
    };
    const names = [...new Set([...(await missing('flowctl')), ...(await missing('flowctl/adapters/node-http'))])];
    expect(names).toEqual(expect.arrayContaining(['hono', 'ws']));
    // @types/node too: these entries' declarations take Node's and the web's HTTP types (Request, IncomingMessage).
    const typesNode = `@types/node@${PKG.devDependencies['@types/node']}`;
    await npm(['install', ...NPM_FLAGS, typesNode, ...names.map((name) => `${name}@${PKG.peerDependencies[name]}`)], app);
    expect(await missing('flowctl')).toEqual([]);
    await writeFile(join(app, 'hosted-node-http.mjs'), docBlock('hosted-node-http.mjs'));
    expect((await node(['hosted-node-http.mjs'], app)).stdout.trim()).toBe('200 ok');
    await typeCheck(app, { 'hosted.mts': HOSTED_TS, 'hosted.cts': HOSTED_TS }, ['node']);
  });

  it('passes publint and attw on the tarball', async () => {
    await exec(process.execPath, [join(ROOT, 'node_modules/publint/src/cli.js'), 'run', tarball, '--strict', '--pack', 'false'], {
      cwd: work,
      timeout: CAP_MS,
    });
    const attw = join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    await exec(process.execPath, [attw, tarball, '--profile', 'node16', '--format', 'ascii'], { cwd: work, timeout: CAP_MS, maxBuffer: 16 * MB });
  });
});
