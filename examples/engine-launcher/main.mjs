#!/usr/bin/env node
// `npm run start:engine`: the engine's REST launcher with two example flows, ready for curl and MCP clients.
//
//   node examples/engine-launcher/main.mjs [--port 8080] [--host 127.0.0.1] [--store=sql] [--dir <path>]
//
// - greet: a pure 3-step flow (flows/greet.yaml).
// - shop-list: a browser Recording built at start-up from ops.json against the demo page
//   (site/index.html) that this script serves on 127.0.0.1; its navigate URL is the page's real port.
// - Everything it writes goes to the working dir (default examples/engine-launcher/.data/, git-ignored):
//   flows/ and recordings/ (so `flowctl mcp` and `flowctl inspect` run there), and the run store:
//   the fs store .flowctl/ by default, or with --store=sql (or DATABASE_URL) Postgres at DATABASE_URL,
//   else PGlite in <dir>/.flowctl/db (as flowctl serve --store=sql).
// It imports the package by its own name (`flowctl`), so it runs the built dist/ (npm run build,
// which `bash scripts/setup.sh` does).
//
// Start-up binds before it writes: the launcher port and the demo page are bound first, then the
// working dir is claimed (<dir>/.engine-launcher.pid, refused while the instance named there is
// alive), and only then are flows, the Recording and deploys written. A second start on a busy
// port, or in a working dir another live instance uses, exits 1 having changed nothing that the first
// one serves.
import { copyFile, mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildRecording, builtinTools, compile, compileFlow, createEngine, createLauncher, createToolRegistry, recordingToFlow, writeRecording } from 'flowctl';
import { createPlaywrightExecutor } from 'flowctl/adapters/executor-playwright';
import { serveNodeHttp } from 'flowctl/adapters/node-http';
import { createEnvSecrets } from 'flowctl/adapters/secrets-env';
import { createFsStorage } from 'flowctl/adapters/storage-fs';
import { serveDemoSite } from './site-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    host: { type: 'string', default: '127.0.0.1' },
    store: { type: 'string' },
    dir: { type: 'string', default: join(here, '.data') },
  },
});
if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535) {
  console.error(`engine-launcher: --port must be an integer from 0 to 65535, got "${opts.port}"`);
  process.exit(2);
}
if (opts.store !== undefined && opts.store !== 'sql' && opts.store !== 'fs') {
  console.error(`engine-launcher: --store must be fs or sql, got "${opts.store}"`);
  process.exit(2);
}
if (opts.host !== '127.0.0.1' && opts.host !== 'localhost' && opts.host !== '::1') {
  console.error('engine-launcher: this example serves without a token, so it binds loopback only (127.0.0.1, ::1, localhost)');
  process.exit(2);
}
const dir = resolve(opts.dir);
const useSql = opts.store === 'sql' || (opts.store === undefined && Boolean(process.env.DATABASE_URL));

async function openStorage() {
  if (!useSql) return { storage: createFsStorage({ dir: join(dir, '.flowctl') }), label: `fs store ${join(dir, '.flowctl')}` };
  const { sqlStorageFromEnv } = await import('flowctl/adapters/storage-sql');
  const storage = sqlStorageFromEnv({ defaultDataDir: join(dir, '.flowctl', 'db') });
  return { storage, label: process.env.DATABASE_URL ? 'Postgres (DATABASE_URL)' : `PGlite in ${join(dir, '.flowctl', 'db')}` };
}

/** Whether a process with this pid is alive (EPERM: it is, owned by someone else). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Claim the working dir for this process: create <dir>/.engine-launcher.pid exclusively. A file left
 * by an instance that died (its pid not alive) is taken over; a live instance's is an error.
 * Returns a function that releases the claim.
 */
async function claimWorkingDir() {
  const file = join(dir, '.engine-launcher.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return () => rm(file, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(`another instance (pid ${pid}) serves the working dir ${dir}; stop it, or pass another --dir`);
    }
    await rm(file, { force: true }); // left by an instance that is gone (or half-written): take over
  }
  throw new Error(`cannot claim the working dir ${dir} (${file} keeps coming back)`);
}

async function main() {
  // 1. Bind first: the launcher's port (answering 503 until the flows are ready) and the demo page.
  // A busy port fails here, before anything is written.
  let ready;
  const handler = {
    fetch: (request, env) =>
      ready
        ? ready.fetch(request, env)
        : new Response(JSON.stringify({ error: 'starting', message: '[flowctl] [engine-launcher] starting up; retry in a moment' }), {
            status: 503,
            headers: { 'content-type': 'application/json', 'retry-after': '1' },
          }),
  };
  const server = await serveNodeHttp(handler, { port: Number(opts.port), host: opts.host });
  const site = await serveDemoSite();
  // 2. Claim the working dir; 3. only then write into it.
  await mkdir(dir, { recursive: true });
  let release;
  try {
    release = await claimWorkingDir();
  } catch (err) {
    await server.close();
    await site.close();
    throw err;
  }
  await mkdir(join(dir, 'flows'), { recursive: true });
  const browser = createPlaywrightExecutor();
  const tools = createToolRegistry(builtinTools(), browser.tools);

  // The pure flow, copied into the working dir so `flowctl mcp` there serves it too.
  await copyFile(join(here, 'flows/greet.yaml'), join(dir, 'flows/greet.yaml'));
  const greet = compile(await readFile(join(here, 'flows/greet.yaml'), 'utf8'), { file: 'flows/greet.yaml', tools });
  // The Recording: the ops file with the demo page's actual URL, built and written like `flowctl record`.
  const ops = JSON.parse(await readFile(join(here, 'ops.json'), 'utf8')).map((op) => (op.kind === 'navigate' ? { ...op, url: site.url } : op));
  const built = await buildRecording({
    name: 'shop-list',
    task: 'Add an item to the demo shopping list and read the list back',
    ops,
    inputs: ['item', 'aisle'],
    readFile: (path) => readFile(join(here, path)),
  });
  await writeRecording(dir, built);
  const shop = compileFlow(recordingToFlow(built.recording), { file: 'recordings/shop-list.json', tools });
  for (const [file, r] of [
    ['flows/greet.yaml', greet],
    ['recordings/shop-list.json', shop],
  ]) {
    if (!r.ok) throw new Error(`${file} does not compile: ${r.diagnostics.map((d) => d.message).join('; ')}`);
  }

  const { storage, label } = await openStorage();
  const engine = createEngine({ storage, tools, secrets: createEnvSecrets(), cwd: dir });
  const launcher = createLauncher({
    engine,
    flows: [
      { name: 'greet', spec: greet.spec },
      { name: 'shop-list', spec: shop.spec },
    ],
    logger: { debug() {}, info() {}, warn() {}, error: (m, d) => console.error(m, d ?? '') },
  });
  const served = await launcher.flows();
  ready = launcher;
  const base = server.url;
  const mcpConfig = { mcpServers: { 'flowctl-demo': { command: process.execPath, args: [join(repo, 'bin/flowctl.mjs'), 'mcp'], cwd: dir } } };

  console.log(`listening on ${base}`);
  console.log(`demo page: ${site.url}`);
  console.log(`runs: ${label}`);
  console.log('\nserved flows:');
  for (const f of served) console.log(`  ${f.name}  ${f.digest}`);
  console.log(`
Try it (paste into another terminal):

  curl -s ${base}/flows
  curl -s -X POST ${base}/flows/greet/runs -H 'content-type: application/json' -d '{"who":"Ada","times":2}'
  curl -s -X POST ${base}/flows/shop-list/runs -H 'content-type: application/json' -d '{"item":"pears","aisle":"produce"}'
  curl -s -X POST '${base}/flows/shop-list/runs?mode=async' -H 'content-type: application/json' -d '{"item":"eggs","aisle":"dairy"}'
  curl -s ${base}/runs/<run_id>
  curl -s -X POST ${base}/runs/<run_id>/replay -H 'content-type: application/json' -d '{"mode":"verify"}'
  curl -s ${base}/openapi.json

Inspect a run with the CLI (same store):

  (cd ${dir} && node ${join(repo, 'bin/flowctl.mjs')} inspect <run_id>)

MCP (stdio) over the same flows; a client config:

  ${JSON.stringify(mcpConfig)}

or the MCP Inspector CLI:

  (cd ${dir} && npx @modelcontextprotocol/inspector --cli node ${join(repo, 'bin/flowctl.mjs')} mcp --method tools/list)

Ctrl-C stops.`);

  const stop = async (signal) => {
    console.log(`\n${signal}: stopping`);
    await server.close();
    await engine.dispose();
    await browser.dispose();
    await site.close();
    await release();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  if (err?.code === 'EADDRINUSE') {
    console.error(
      `engine-launcher: port ${opts.port} on ${opts.host} is in use (another instance?); nothing was written. Stop it, or pass --port <n> (0: any free port)`,
    );
    process.exit(1);
  }
  console.error(`engine-launcher: ${err?.message ?? err}`);
  process.exit(1);
});
