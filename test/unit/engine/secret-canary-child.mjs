// Child process for secret-canary.test.ts: runs a secret-using flow through success, failure and
// retry paths against storage-fs, logging every line to stderr and printing every Run to stdout.
// argv: <store dir>. The secret comes from FLOWCTL_SECRET_API_TOKEN.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
// FLOWCTL_DIST: a private copy of dist/ (see test/crash/dist-snapshot.ts); default: the package's own build.
const dist = process.env.FLOWCTL_DIST ?? new URL('../../../dist', import.meta.url).pathname;
const { contractDigest, createEngine, createToolRegistry, defineTool, prettyJson, writeJournalFixture } = await import(`${dist}/index.js`);
const { createFsStorage } = await import(`${dist}/adapters/storage-fs.js`);
const { createEnvSecrets } = await import(`${dist}/adapters/secrets-env.js`);

const dir = process.argv[2];
const attempts = new Map();
const tool = defineTool(
  {
    ref: 'canary/use-token',
    version: '1.0.0',
    description: 'Uses a token; echoes it in output, errors, logs, warnings and effects.',
    input_schema: { type: 'object', properties: { token: { type: 'string' }, mode: { type: 'string' } }, required: ['token', 'mode'] },
    output_schema: { type: 'object' },
    capabilities: ['net', 'secrets'],
  },
  async ({ token, mode }, ctx) => {
    const n = (attempts.get(mode) ?? 0) + 1;
    attempts.set(mode, n);
    ctx.logger.info(`using token ${token}`, { token });
    ctx.warn({ code: 'echo', message: `token was ${token}`, data: { token } });
    ctx.effect({ kind: 'net', target: `api.example/${token}` });
    if (mode === 'fail' || (mode === 'retry' && n === 1)) throw new Error(`server rejected ${token} (attempt ${n})`);
    return { echoed: token, url: `https://api.example/?key=${token}`, length: token.length };
  },
);
const tools = createToolRegistry([tool]);
const spec = {
  flowspec: 1,
  name: 'canary',
  inputs: {
    mode: { type: 'string', required: true, secret: false, schema: { type: 'string' } },
    api_token: { type: 'string', required: false, secret: true, schema: { type: 'string' } },
  },
  steps: [
    {
      id: 'use',
      tool: { ref: 'canary/use-token', version: '1.0.0', contract_digest: contractDigest(tool.contract) },
      capabilities: ['net', 'secrets'],
      args: { token: 'Bearer ${inputs.api_token}', mode: '${inputs.mode}' },
      retry: { max_attempts: 2, backoff_ms: 1, backoff_factor: 1 },
      timeout_ms: 5000,
    },
  ],
  output: { result: '${steps.use.output}' },
};

const line = (level) => (message, data) => process.stderr.write(`${level} ${message} ${data === undefined ? '' : JSON.stringify(data)}\n`);
const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
const engine = createEngine({ storage: createFsStorage({ dir }), tools, secrets: createEnvSecrets(), logger });
for (const mode of ['ok', 'fail', 'retry']) {
  const run = await engine.run({ spec }, { mode }, { confirm: async () => true });
  process.stdout.write(`${prettyJson(run)}\n`);
  await writeFile(join(dir, `fixture-${mode}.json`), writeJournalFixture(run, spec));
  const replay = await engine.replay({ run_id: run.id }, { mode: 'verify' });
  process.stdout.write(`${prettyJson(replay)}\n`);
}
await engine.dispose();
