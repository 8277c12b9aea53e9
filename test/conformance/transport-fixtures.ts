import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Hono } from 'hono';
import { flowctlExpress } from '../../adapters/express/index.js';
import { flowctlHono } from '../../adapters/hono/index.js';
import { applyServerLimits, nodeRequestListener, serveNodeHttp, type FetchHandler, type ServerLimits } from '../../adapters/node-http/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { compile } from '../../src/flow/compile.js';
import type { FlowSpec } from '../../src/flow/types.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';

/** Flows and transports shared by the REST behaviour suite (transport-rest.test.ts). */

export const tools = createToolRegistry(builtinTools());

/** A pure 3-step flow with a required input, a defaulted one and a secret one (never used by a step). */
export const GREET = `name: greet
description: Greets someone in three pure steps.
inputs:
  who:
    type: string
  times:
    type: integer
    default: 1
  api_key:
    type: string
    secret: true
steps:
  - id: greet
    tool: core/template@1
    args:
      template: Hello, {{ who }}!
      values:
        who: \${inputs.who}
  - id: shape
    tool: core/transform@1
    args:
      value:
        greeting: \${steps.greet.output.text}
        times: \${inputs.times}
  - id: check
    tool: core/assert@1
    args:
      that: \${steps.shape.output.value.times}
output:
  greeting: \${steps.shape.output.value.greeting}
  times: \${steps.shape.output.value.times}
`;

/** Fails at its only step (a 0 is falsy). */
export const FAILS = `name: fails
steps:
  - id: never
    tool: core/assert@1
    args:
      that: 0
      message: always fails
`;

/** Takes about a second (a child process sleeping): longer than the short idle timeout of the idle test. */
export const SLOW = `name: slow
steps:
  - id: nap
    tool: shell/exec@1
    args:
      command: sleep
      args: ["1"]
output:
  code: \${steps.nap.output.exit_code}
`;

export function compileOrThrow(source: string): FlowSpec {
  const r = compile(source, { file: 'fixture.yaml', tools });
  if (!r.ok) throw new Error(`fixture does not compile: ${JSON.stringify(r.diagnostics)}`);
  return r.spec;
}

export function fixtureEngine() {
  return createEngine({ storage: createMemoryStorage(), tools });
}

export function fixtureFlows() {
  return [
    { name: 'greet', spec: compileOrThrow(GREET) },
    { name: 'fails', spec: compileOrThrow(FAILS) },
    { name: 'slow', spec: compileOrThrow(SLOW) },
  ];
}

export interface Started {
  /** Base URL the launcher's routes hang off (with the mount prefix for express and hono). */
  base: string;
  port: number;
  close(): Promise<void>;
}

export interface Transport {
  name: string;
  /** Serve `handler`; `limits` are the connection rules of the node-http adapter (idle close, cap). */
  start(handler: FetchHandler, limits?: ServerLimits): Promise<Started>;
}

async function listen(server: Server): Promise<number> {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  }
  return (server.address() as AddressInfo).port;
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

export const TRANSPORTS: Transport[] = [
  {
    name: 'node-http',
    async start(handler, limits = {}) {
      const s = await serveNodeHttp(handler, { port: 0, host: '127.0.0.1', ...limits });
      return { base: s.url, port: s.port, close: s.close };
    },
  },
  {
    name: 'express',
    async start(handler, limits = {}) {
      const app = express();
      app.get('/health', (_req, res) => {
        res.json({ ok: true });
      });
      app.use('/api', flowctlExpress(handler));
      const server = createServer(app);
      applyServerLimits(server, limits);
      const port = await listen(server);
      return { base: `http://127.0.0.1:${port}/api`, port, close: closer(server) };
    },
  },
  {
    name: 'hono',
    async start(handler, limits = {}) {
      const app = new Hono();
      app.get('/health', (c) => c.json({ ok: true }));
      app.route('/api', flowctlHono(handler));
      // The host's own node:http server, with the adapter's request listener (structured answers to
      // requests Node parsed but the URL builder refuses) and connection rules.
      const server = createServer(nodeRequestListener({ fetch: app.fetch }));
      applyServerLimits(server, limits);
      const port = await listen(server);
      return { base: `http://127.0.0.1:${port}/api`, port, close: closer(server) };
    },
  },
];

/**
 * Open a raw TCP connection, optionally send `payload`, and report whether the server closed it
 * within `boundMs` (a bound, not a measurement), with everything received.
 */
export function watchConnection(port: number, payload: string | undefined, boundMs: number): Promise<{ closedByServer: boolean; received: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let settled = false;
    const done = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ closedByServer, received });
    };
    const timer = setTimeout(() => done(false), boundMs);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (received += d));
    socket.on('connect', () => {
      if (payload !== undefined) socket.write(payload);
    });
    socket.on('end', () => done(true));
    socket.on('close', () => done(true));
    socket.on('error', () => done(true));
  });
}

export { rawExchange, holdConnection, type RawAnswer } from '../e2e/rest-helpers.js';
