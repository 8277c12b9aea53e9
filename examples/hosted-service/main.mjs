#!/usr/bin/env node
// `npm start`: the hosted service (docs/hosted-api.md) on the embedded default: PGlite in
// SVC_DATA_DIR (default ./.data), one process doing everything (SVC_ROLE=all).
//
//   PORT=8080 HOST=127.0.0.1 node examples/hosted-service/main.mjs
//
// On Postgres (DATABASE_URL) the roles split: SVC_ROLE=api processes answer the API (and run the
// scheduler), SVC_ROLE=worker processes (`npm run worker`) execute queued runs
// (SVC_RUN_DISPATCH=queue) and answer only /healthz and /readyz on their PORT.
//
// Settings are the environment variables of docs/hosted-api.md ("Configuration"). Outside
// production, SVC_SESSION_SECRETS and SVC_SECRETS_KEY are generated once into SVC_DATA_DIR/secrets.json
// (mode 0600) so sessions survive restarts; in production they must be set.
// It imports the package by its own name (`flowctl`), so it runs the built dist/.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { settingsFromEnv } from 'flowctl';
import { assembleHostedService } from 'flowctl/adapters/hosted';
import { sqlStorageOptionsFromEnv } from 'flowctl/adapters/storage-sql';

const env = process.env;
const say = (line) => process.stderr.write(`${line}\n`);

function fail(message) {
  say(`hosted-service: ${message}`);
  process.exit(2);
}

/** Secrets outside production: from the environment, else generated once into the data folder. */
async function localSecrets(dataDir) {
  const file = join(dataDir, 'secrets.json');
  let stored = {};
  try {
    stored = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if (err.code !== 'ENOENT') fail(`cannot read ${file}: ${err.message}`);
  }
  const next = {
    session_secrets: stored.session_secrets ?? [randomBytes(32).toString('base64url')],
    secrets_key: stored.secrets_key ?? randomBytes(32).toString('base64'),
  };
  if (JSON.stringify(next) !== JSON.stringify(stored)) {
    await writeFile(file, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    say(`[hosted] generated SVC_SESSION_SECRETS and SVC_SECRETS_KEY into ${file} (set them in the environment to choose your own)`);
  }
  return next;
}

async function main() {
  const role = env.SVC_ROLE || 'all';
  if (!['all', 'api', 'worker'].includes(role)) fail(`SVC_ROLE must be all, api or worker, got ${JSON.stringify(role)}`);
  const port = env.PORT || '8080';
  if (!/^\d+$/.test(port) || Number(port) > 65535) fail(`PORT must be an integer from 0 to 65535, got ${JSON.stringify(port)}`);
  const host = env.HOST || '127.0.0.1';
  const dataDir = resolve(env.SVC_DATA_DIR || '.data');
  const production = env.NODE_ENV === 'production';

  let settings;
  try {
    settings = settingsFromEnv(env);
  } catch (err) {
    fail(err.message);
  }
  // Without SVC_PUBLIC_URL the public URL is the one bound (PORT=0 picks a free port).
  if (!env.SVC_PUBLIC_URL) delete settings.publicUrl;
  if (!production) {
    await mkdir(dataDir, { recursive: true });
    const local = await localSecrets(dataDir);
    settings.sessionSecrets ??= local.session_secrets;
    settings.secretsKeys ??= [Buffer.from(local.secrets_key, 'base64')];
    const missing = ['SVC_SESSION_SECRETS', 'SVC_SECRETS_KEY'].filter((name) => !env[name]);
    if (env.DATABASE_URL && missing.length > 0) {
      say(
        `[hosted] note: DATABASE_URL is set but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not: this process uses the one${missing.length > 1 ? 's' : ''} in ${join(dataDir, 'secrets.json')}.`,
      );
      say('         Every process sharing this database must share SVC_SESSION_SECRETS and SVC_SECRETS_KEY, or sessions');
      say('         signed by one are refused by another and secrets sealed by one cannot be opened by another.');
    }
  }

  if (role !== 'all' && !env.DATABASE_URL)
    fail(`SVC_ROLE=${role} needs DATABASE_URL (Postgres): on the embedded PGlite one process does everything (SVC_ROLE=all)`);
  // SVC_RUN_SCREENSHOTS (default on): a JPEG after every successful browser step, stored as a run
  // artifact (the run page shows them; fields filled from secret slots are blacked out); `off` saves the space.
  const shots = env.SVC_RUN_SCREENSHOTS || 'on';
  if (shots !== 'on' && shots !== 'off') fail(`SVC_RUN_SCREENSHOTS must be on or off, got ${JSON.stringify(shots)}`);
  // SVC_BROWSER_WARM_CONTEXTS (default 2): fresh browser contexts kept ready for the next runs
  // (docs/browser.md, "Warm pool"); 0 starts the browser on the first browser step instead.
  const warm = env.SVC_BROWSER_WARM_CONTEXTS || '2';
  if (!/^\d+$/.test(warm) || Number(warm) > 64) fail(`SVC_BROWSER_WARM_CONTEXTS must be an integer from 0 to 64, got ${JSON.stringify(warm)}`);
  // SVC_EXAMPLE_PORT (default PORT+1): the starter example's demo site, on an origin of its own so
  // runs never reach this service's API; SVC_EXAMPLE_URL when workers reach it under another name.
  const examplePort = env.SVC_EXAMPLE_PORT || (Number(port) === 0 ? '0' : String(Number(port) + 1));
  if (!/^\d+$/.test(examplePort) || Number(examplePort) > 65535)
    fail(`SVC_EXAMPLE_PORT must be an integer from 0 to 65535, got ${JSON.stringify(examplePort)}`);
  say(
    env.DATABASE_URL ? '[hosted] database: Postgres (DATABASE_URL)' : `[hosted] database: PGlite in ${join(dataDir, 'db')} (first start takes a few seconds)`,
  );

  // The one assembly (flowctl/adapters/hosted, docs/deploy.md "One assembly"): storage, the engine
  // under the hosted tool policy and egress guard, the Playwright executor, the studio browser, the
  // queue, the scheduler and the run live view, exactly as the hosted e2e tests build it.
  let assembly;
  try {
    assembly = await assembleHostedService({
      settings,
      role,
      database: sqlStorageOptionsFromEnv({ env, defaultDataDir: join(dataDir, 'db') }),
      listen: { port: Number(port), host },
      exampleSite: { port: Number(examplePort), ...(env.SVC_EXAMPLE_URL ? { url: env.SVC_EXAMPLE_URL } : {}) },
      screenshots: shots === 'on',
      warmContexts: Number(warm),
      ...(env.SVC_BROWSER_CDP_URL ? { browserCdpUrl: env.SVC_BROWSER_CDP_URL } : {}),
      logger: consoleLogger(),
    });
  } catch (err) {
    fail(
      err.code === 'EADDRINUSE'
        ? `port ${err.port ?? port} on ${host} is in use (set PORT, or SVC_EXAMPLE_PORT for the example site, to another one)`
        : err.message,
    );
  }
  const { service } = assembly;
  if (role !== 'api') {
    try {
      await service.startWorker();
    } catch (err) {
      await assembly.close();
      fail(`cannot start the run worker: ${err.message}`);
    }
  }
  if (role === 'worker') {
    say(`flowctl hosted worker on ${assembly.url} (health only), executing queued runs ${service.settings.workerConcurrency} at a time`);
  }

  const url = assembly.url;
  if (role !== 'worker') {
    say('');
    say(`flowctl hosted service on ${url}  (${production ? 'production' : 'development'}, role ${role})`);
    say('');
    say(
      service.webRoot
        ? `  Open ${url}/ in a browser: the web app (sign up there), or use curl:`
        : '  (no web app: dist/web is not built; `npm run build` builds it)',
    );
    say('');
    say('  Sign up (the cookie jar keeps your session):');
    say(`    curl -s -c jar -b jar -X POST ${url}/api/auth/signup -H 'content-type: application/json' \\`);
    say(`      -d '{"email":"you@example.com","password":"a long passphrase","org_name":"My org"}'`);
    say(`    curl -s -b jar ${url}/api/session`);
    say('');
    say('  Next:');
    say(`    curl -s -b jar -X POST ${url}/api/keys -H 'content-type: application/json' -d '{"mode":"live"}'   # an API key, shown once`);
    say(`    curl -s -b jar -X POST ${url}/api/automations/example                                    # a published starter automation`);
    say(`    curl -s -X POST ${url}/v1/run/example-forecast -H "authorization: Bearer <secret>" \\`);
    say(`      -H 'content-type: application/json' -d '{"inputs":{"city":"Oslo"}}'                # run it`);
    say(`    curl -s -b jar ${url}/api/executions                                                     # its runs`);
    say(`    curl -s -b jar ${url}/api/audit                                                          # the audit log`);
    say(`    API reference: ${url}/docs   OpenAPI: ${url}/openapi.json   health: ${url}/healthz`);
    say('');
    say('  Ctrl-C stops it. The engine launcher is one command away: npm run start:engine');
  }

  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    say(`[hosted] ${signal}: stopping`);
    // Stops taking requests and queued runs, waits (at most 30 s) for the runs in flight, then closes
    // the browsers, the queue and the database.
    await assembly.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function consoleLogger() {
  const out = (level) => (message) => say(`[hosted] ${level}: ${message}`);
  return { debug: () => {}, info: out('info'), warn: out('warn'), error: out('error') };
}

main().catch((err) => {
  say(`hosted-service: ${err?.stack ?? err}`);
  process.exit(1);
});
