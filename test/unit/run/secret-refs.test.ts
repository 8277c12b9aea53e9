import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveNodeHttp } from '../../../adapters/node-http/index.js';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { createLauncher } from '../../../src/launcher/launcher.js';
import { inputsBodySchema } from '../../../src/launcher/request-schemas.js';
import { isFlowError } from '../../../src/errors.js';
import { compile } from '../../../src/flow/compile.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import type { SecretStore } from '../../../src/ports/secrets.js';
import { resolveInputs } from '../../../src/run/inputs.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { startEchoServer, type EchoServer } from '../secrets/leak-helpers.js';

// Issue 12, defect 5: `{"token": "secret:other"}` posted to POST /flows/{name}/runs sent
// FLOWCTL_SECRET_OTHER to a host the caller chose. A secret input resolves only the secret its
// flow declares for it, unless the operator allows references explicitly.

const tools = createToolRegistry(builtinTools());
const TOKEN = 'token-value-0f1e2d3c';
const OTHER = 'other-value-9a8b7c6d';
const VAULT = 'vault-value-5e4f3a2b';
let echo: EchoServer;
let spec: FlowSpec;
let pinned: FlowSpec;

function compileOrThrow(text: string): FlowSpec {
  const r = compile(text, { file: 'f.yaml', tools });
  if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
  return r.spec;
}

const flow = (base: string, name: string, token: string) => `name: ${name}
inputs:
  url: {type: string, default: "${base}/echo"}
  token: ${token}
steps:
  - id: call
    tool: http/request@1
    args:
      url: \${inputs.url}
      query: {k: "\${inputs.token}"}
output:
  status: \${steps.call.output.status}
`;

beforeAll(async () => {
  echo = await startEchoServer();
  spec = compileOrThrow(flow(echo.base, 'send', '{type: string, secret: true}'));
  pinned = compileOrThrow(flow(echo.base, 'pinned', '{type: string, secret: true, default: "secret:vault/api"}'));
});
afterAll(() => echo.close());

/** A secret store over fixed values that records every reference it was asked for. */
function recordingStore(): SecretStore & { asked: string[] } {
  const env = createEnvSecrets({ env: { FLOWCTL_SECRET_TOKEN: TOKEN, FLOWCTL_SECRET_OTHER: OTHER, FLOWCTL_SECRET_VAULT_API: VAULT } });
  const asked: string[] = [];
  return {
    name: 'recording',
    asked,
    resolve(ref) {
      asked.push(ref);
      return env.resolve(ref);
    },
  };
}

function issuesOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    if (isFlowError(err, 'invalid_inputs')) return (err.data as { issues: unknown }).issues;
    throw err;
  }
  throw new Error('expected invalid_inputs');
}

describe('resolveInputs: a secret input resolves only the secret its flow declares', () => {
  it("defaults to secret:<input name>, or to the flow's declared default reference", () => {
    expect(resolveInputs(spec, {}).inputs.token).toBe('secret:token');
    expect(resolveInputs(spec, { token: 'secret:token' }).inputs.token).toBe('secret:token');
    expect(resolveInputs(pinned, {}).inputs.token).toBe('secret:vault/api');
    expect(resolveInputs(pinned, { token: 'secret:vault/api' }).inputs.token).toBe('secret:vault/api');
  });

  it('refuses a reference to another secret, without repeating it', () => {
    const issues = issuesOf(() => resolveInputs(spec, { token: 'secret:other' }));
    expect(issues).toEqual([{ path: 'token', message: expect.stringContaining('secret:token') }]);
    expect(JSON.stringify(issues)).not.toContain('secret:other');
    expect(JSON.stringify(issues)).toContain('--allow-secret-refs');
    expect(issuesOf(() => resolveInputs(pinned, { token: 'secret:token' }))).toEqual([{ path: 'token', message: expect.stringContaining('secret:vault/api') }]);
  });

  it('accepts another reference only when the operator allows it', () => {
    expect(resolveInputs(spec, { token: 'secret:other' }, { allowSecretRefs: true }).inputs.token).toBe('secret:other');
    // A value is still never accepted.
    expect(issuesOf(() => resolveInputs(spec, { token: OTHER }, { allowSecretRefs: true }))).toEqual([
      { path: 'token', message: 'is a secret input: pass a reference secret:<name>, never the value itself' },
    ]);
  });
});

describe('engine and REST launcher', () => {
  it('the engine refuses a caller-chosen reference before anything runs or is stored', async () => {
    const secrets = recordingStore();
    const storage = createMemoryStorage();
    const engine = createEngine({ storage, tools, secrets });
    try {
      const before = echo.received.length;
      await expect(engine.run({ spec }, { token: 'secret:other' })).rejects.toMatchObject({ code: 'invalid_inputs' });
      await expect(engine.start({ spec }, { token: 'secret:other' })).rejects.toMatchObject({ code: 'invalid_inputs' });
      expect(secrets.asked).not.toContain('secret:other');
      expect(echo.received.length).toBe(before);
      expect(await engine.listRuns()).toEqual([]);
      const run = await engine.run({ spec }, {});
      expect(run.status).toBe('succeeded');
      expect(echo.received.at(-1)).toBe(TOKEN);
      const vault = await engine.run({ spec: pinned }, {});
      expect(vault.status).toBe('succeeded');
      expect(echo.received.at(-1)).toBe(VAULT);
    } finally {
      await engine.dispose();
    }
  });

  it('POST /flows/{name}/runs with {"token": "secret:other"} answers 422 and sends nothing; --allow-secret-refs lets it through', async () => {
    for (const allow of [false, true]) {
      const secrets = recordingStore();
      const engine = createEngine({ storage: createMemoryStorage(), tools, secrets, allowSecretRefs: allow });
      const launcher = createLauncher({ engine, flows: [{ name: 'send', spec }], allowSecretRefs: allow });
      const server = await serveNodeHttp(launcher, { port: 0, host: '127.0.0.1' });
      try {
        const before = echo.received.length;
        const res = await fetch(`${server.url}/flows/send/runs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: 'secret:other' }),
        });
        const body = (await res.json()) as { error?: string; issues?: { path: string; message: string }[]; status?: string; output?: unknown };
        if (!allow) {
          expect(res.status).toBe(422);
          expect(body.error).toBe('invalid_inputs');
          expect(body.issues).toEqual([{ path: 'token', message: expect.stringContaining('secret:token') }]);
          expect(secrets.asked).toEqual([]);
          expect(echo.received.length).toBe(before);
          expect(await engine.listRuns()).toEqual([]);
        } else {
          expect(res.status).toBe(200);
          expect(body.status).toBe('succeeded');
          expect(echo.received.at(-1)).toBe(OTHER);
          expect(JSON.stringify(body)).not.toContain(OTHER);
        }
        // The documented body schema says the same.
        const flows = (await (await fetch(`${server.url}/flows`)).json()) as { flows: { inputs: { properties: Record<string, Record<string, unknown>> } }[] };
        const token = flows.flows[0]!.inputs.properties.token!;
        expect(token['x-flowctl-secret']).toBe(true);
        if (allow) expect(token.pattern).toBeTypeOf('string');
        else expect(token.enum).toEqual(['secret:token']);
      } finally {
        await server.close();
        await engine.dispose();
      }
    }
  });

  it('the body schema pins each secret input to its declared reference unless references are allowed', () => {
    expect(inputsBodySchema(pinned).properties).toMatchObject({ token: { enum: ['secret:vault/api'] } });
    expect((inputsBodySchema(pinned, { allowSecretRefs: true }).properties as Record<string, Record<string, unknown>>).token!.enum).toBeUndefined();
  });
});
