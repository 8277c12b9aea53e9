import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { isFlowError } from '../../../src/errors.js';
import { compile } from '../../../src/flow/compile.js';
import { bearerMatches } from '../../../src/http/auth.js';
import { readBodyText } from '../../../src/http/body.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { createEngine } from '../../../src/engine/engine.js';
import { createLauncher } from '../../../src/launcher/launcher.js';

// The launcher in-process (no transport): what the transport suite cannot easily reach.
const tools = createToolRegistry(builtinTools());
const flow = (greeting: string) => {
  const r = compile(`name: hi\nsteps:\n  - id: t\n    tool: core/template@1\n    args:\n      template: ${greeting}\noutput: \${steps.t.output.text}\n`, {
    file: 'hi.yaml',
    tools,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
  return r;
};
const post = (path: string, body?: string) => new Request(`http://127.0.0.1${path}`, { method: 'POST', body });

describe('createLauncher', () => {
  it('runs each served flow by its digest without deploying it, and a resolver picks up a new digest', async () => {
    const storage = createMemoryStorage();
    const engine = createEngine({ storage, tools });
    let current = flow('one');
    const launcher = createLauncher({ engine, flows: () => [{ name: 'hi', spec: current.spec }] });
    const first = await (await launcher.fetch(post('/flows/hi/runs'))).json();
    expect(first.output).toBe('one');
    expect(first.flow_digest).toBe(current.flow_digest);
    current = flow('two');
    const second = await (await launcher.fetch(post('/flows/hi/runs'))).json();
    expect(second.output).toBe('two');
    expect(second.flow_digest).toBe(current.flow_digest);
    // The name is the launcher's own: no deploy is written, the specs are stored by digest.
    expect(await engine.resolve({ name: 'hi', front: 'rest' })).toBeUndefined();
    expect(await storage.deploys.list('rest')).toEqual([]);
    expect(await storage.specs.get(first.flow_digest)).toBeDefined();
    await engine.dispose();
  });

  it("refuses a served flow whose given digest is not its FlowSpec's, and runs nothing", async () => {
    const engine = createEngine({ storage: createMemoryStorage(), tools });
    const launcher = createLauncher({ engine, flows: [{ name: 'hi', spec: flow('one').spec, digest: flow('two').flow_digest }] });
    const res = await launcher.fetch(post('/flows/hi/runs'));
    // A caller's mistake, not the client's: a 500 that keeps its code.
    expect(res.status).toBe(500);
    expect((await res.json()).error).toBe('digest_mismatch');
    expect(await engine.listRuns()).toEqual([]);
    await engine.dispose();
  });

  it('refuses a bad flow list at once', () => {
    const engine = createEngine({ storage: createMemoryStorage(), tools });
    const { spec } = flow('x');
    const attempt = (flows: unknown) => {
      try {
        createLauncher({ engine, flows: flows as never });
        return 'ok';
      } catch (err) {
        return isFlowError(err) ? err.code : String(err);
      }
    };
    expect(
      attempt([
        { name: 'a', spec },
        { name: 'a', spec },
      ]),
    ).toBe('duplicate_flow');
    expect(attempt([{ name: '', spec }])).toBe('invalid_flows');
    expect(attempt('flows/')).toBe('invalid_flows');
    expect(attempt([{ name: 'a', spec }])).toBe('ok');
  });

  it('answers a body that is not UTF-8 with 400 invalid_json', async () => {
    const engine = createEngine({ storage: createMemoryStorage(), tools });
    const launcher = createLauncher({ engine, flows: [{ name: 'hi', spec: flow('x').spec }] });
    const res = await launcher.fetch(
      new Request('http://127.0.0.1/flows/hi/runs', {
        method: 'POST',
        body: new Uint8Array([0x7b, 0xff, 0x7d]),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('invalid_json');
    expect(await engine.listRuns()).toEqual([]);
    await engine.dispose();
  });

  it('counts streamed bytes when there is no Content-Length', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(6));
        c.enqueue(new Uint8Array(6));
        c.close();
      },
    });
    const req = new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit);
    await expect(readBodyText(req, 10)).rejects.toMatchObject({ code: 'body_too_large' });
    const ok = new Request('http://x/', { method: 'POST', body: 'héllo' });
    expect(await readBodyText(ok, 6)).toBe('héllo');
  });

  it('matches a bearer token only exactly, with the Bearer scheme', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('bearer   abc ', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abcd', 'abc')).toBe(false);
    expect(bearerMatches('Bearer ab', 'abc')).toBe(false);
    expect(bearerMatches('Basic abc', 'abc')).toBe(false);
    expect(bearerMatches('abc', 'abc')).toBe(false);
    expect(bearerMatches(null, 'abc')).toBe(false);
    expect(bearerMatches('Bearer ', 'abc')).toBe(false);
  });
});
