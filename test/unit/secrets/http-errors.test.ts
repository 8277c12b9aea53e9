import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { compile } from '../../../src/flow/compile.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { leakIn, startEchoServer, type EchoServer } from './leak-helpers.js';

// Issue 12, defect 1: a non-ASCII secret in a header gave an error naming the character and its
// index; a secret in a URL's userinfo came back in fetch's error text.

const tools = createToolRegistry(builtinTools());
let echo: EchoServer;
beforeAll(async () => {
  echo = await startEchoServer();
});
afterAll(() => echo.close());

async function runWith(secret: string, flow: string) {
  const compiled = compile(flow, { file: 'f.yaml', tools });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const engine = createEngine({ storage: createMemoryStorage(), tools, secrets: createEnvSecrets({ env: { FLOWCTL_SECRET_TOKEN: secret } }) });
  try {
    return await engine.run({ spec: compiled.spec }, {});
  } finally {
    await engine.dispose();
  }
}

const headerFlow = (base: string) => `name: header
inputs:
  token: {type: string, secret: true}
steps:
  - id: call
    tool: http/request@1
    args:
      url: ${base}/echo
      headers: {authorization: "Bearer \${inputs.token}"}
`;

describe('http/request errors never carry secret material', () => {
  it('a header value that is not a ByteString is named by its header, not by its character or index', async () => {
    for (const secret of ['kéy☃-snowman-secret', 'line1\nline2-secret', '密码-secret-value', 'astral-🔑-secret']) {
      const run = await runWith(secret, headerFlow(echo.base));
      expect(run.status).toBe('failed');
      const failed = run.journal.find((e) => e.event === 'step_failed');
      expect(failed?.event === 'step_failed' && failed.error.code).toBe('http_bad_request');
      const message = failed?.event === 'step_failed' ? failed.error.message : '';
      expect(message).toContain('"authorization"');
      expect(message).not.toMatch(/index|value of \d+|greater than/i);
      for (const ch of secret.replace(/[A-Za-z0-9-]/g, '')) expect(message).not.toContain(ch);
      for (const ch of secret.replace(/[A-Za-z0-9-]/g, '')) expect(message).not.toContain(String(ch.codePointAt(0)));
      expect(leakIn(JSON.stringify(run), secret)).toBeUndefined();
    }
  });

  it("a secret in a URL's userinfo is refused without repeating the URL", async () => {
    const secret = 'pa ss+wörd=1&x;y';
    const { host } = new URL(echo.base);
    const run = await runWith(
      secret,
      `name: userinfo
inputs:
  token: {type: string, secret: true}
steps:
  - id: call
    tool: http/request@1
    args:
      url: "http://user:\${inputs.token}@${host}/echo"
`,
    );
    const failed = run.journal.find((e) => e.event === 'step_failed');
    expect(failed?.event === 'step_failed' && failed.error).toMatchObject({ code: 'http_bad_url', retryable: false });
    const message = failed?.event === 'step_failed' ? failed.error.message : '';
    expect(message).not.toContain('user:');
    expect(message).not.toContain('***');
    expect(leakIn(JSON.stringify(run), secret)).toBeUndefined();
  });
});
