import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { compile } from '../../../src/flow/compile.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

const CANARY = 'tok-3f9a1c77-canary';
let server: Server;
let base: string;
let seenAuth: string | undefined;

beforeAll(async () => {
  // Echoes the Authorization header back, as a careless API would in an error body.
  server = createServer((req, res) => {
    seenAuth = req.headers.authorization;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ echoed: req.headers.authorization }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const FLOW = (url: string) => `
name: call-api
inputs:
  token: { type: string, secret: true }
steps:
  - id: call
    tool: http/request@1
    args:
      url: ${url}/me
      headers:
        authorization: Bearer \${inputs.token}
output:
  body: \${steps.call.output.body}
`;

describe('http/request with a secret input', () => {
  it('compiles with the secrets capability granted to that step only, sends the secret, and masks it everywhere', async () => {
    const tools = createToolRegistry(builtinTools());
    const compiled = compile(FLOW(base), { file: 'call-api.yaml', tools });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    expect(compiled.spec.steps[0]!.capabilities.sort()).toEqual(['net', 'secrets']);
    expect(JSON.stringify(compiled.spec)).not.toContain(CANARY);

    const engine = createEngine({
      storage: createMemoryStorage(),
      tools,
      secrets: createEnvSecrets({ env: { FLOWCTL_SECRET_TOKEN: CANARY } }),
    });
    const run = await engine.run({ spec: compiled.spec }, {});
    expect(run.status).toBe('succeeded');
    expect(seenAuth).toBe(`Bearer ${CANARY}`);
    expect(run.output).toEqual({ body: { echoed: 'Bearer ***' } });
    expect(JSON.stringify(run)).not.toContain(CANARY);
    await engine.dispose();
  });

  it('a step that does not reference the secret is not granted the capability', () => {
    const tools = createToolRegistry(builtinTools());
    const compiled = compile(FLOW(base).replace('Bearer ${inputs.token}', 'none'), { file: 'f.yaml', tools });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    expect(compiled.spec.steps[0]!.capabilities).toEqual(['net']);
  });
});
