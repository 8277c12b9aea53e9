import fc from 'fast-check';
import { OP_KINDS } from '../../src/record/ops.js';
import type { ServiceRoute } from '../../src/service/route-table.js';
import { anyString, bodyArb, contentTypeArb, junkValue, schemaArb, type JsonSchema } from './fuzz-arbitraries.js';
import { A, B, PASSWORD, type Cred } from './fuzz-orgs.js';

/**
 * The requests of the hosted API fuzz (test/e2e/hosted-fuzz.test.ts): one generator a route of the
 * route table (from its OpenAPI operation), and the gateway's bodies, MCP JSON-RPC messages and
 * requests off the table. Path parameters and body values are ids and names of org A and of org B.
 */

const credArb = (auth: ServiceRoute['auth'] | 'mixed'): fc.Arbitrary<Cred> => {
  const rare = fc.constantFrom<Cred>('none', 'forgedB', 'garbageCookie', 'badKeyB', 'junkBearer', 'cookieAndKey');
  if (auth === 'bearer') return fc.oneof({ weight: 8, arbitrary: fc.constantFrom<Cred>('liveA', 'liveA', 'testA', 'scopedA') }, { weight: 2, arbitrary: rare });
  if (auth === 'session' || auth === 'owner')
    return fc.oneof({ weight: 8, arbitrary: fc.constantFrom<Cred>('ownerA', 'ownerA', 'ownerA', 'memberA') }, { weight: 2, arbitrary: rare });
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom<Cred>('none', 'ownerA', 'liveA') }, { weight: 1, arbitrary: rare });
};

const ids = () => ({
  a: [A.org, A.owner, A.member, A.greet, A.draft, A.schedule, A.webhook, A.execution, A.run, ...A.keyIds.slice(-3), 'greet', 'a-draft', 'a_secret', A.digest],
  b: [B.org, B.owner, B.member, B.flow, B.draft, B.schedule, B.webhook, B.execution, B.run, B.keyId, 'b-flow', 'b-draft', 'b_secret'],
});

/** A path parameter: an id or name of A, of B (the attack), or junk; usually percent-encoded. */
const paramArb = fc
  .tuple(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .constant(0)
          .map(() => ids().a)
          .chain((xs) => fc.constantFrom(...xs)),
      },
      {
        weight: 4,
        arbitrary: fc
          .constant(0)
          .map(() => ids().b)
          .chain((xs) => fc.constantFrom(...xs)),
      },
      { weight: 2, arbitrary: anyString.map((s) => s.slice(0, 3000)) },
    ),
    fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  )
  .map(([v, encode]) => (encode ? encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '\ufffd')) : v.replace(/[#?/]/g, '') || '%20'));

const target = fc.oneof(
  anyString,
  fc.record({ css: anyString }),
  fc.record({ label: anyString }),
  fc.record({ role: fc.constantFrom('button', 'textbox', 'x'), name: anyString }),
  fc.record({ testid: anyString }),
  junkValue,
);
const opArb = fc.record(
  {
    kind: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...OP_KINDS) }, { weight: 1, arbitrary: anyString }),
    target,
    url: fc.constantFrom('https://site.a.test/', 'javascript:alert(1)', 'file:///etc/passwd', 'http://127.0.0.1:1/', 'https://site.b.test/start'),
    value: fc.oneof(anyString, fc.constantFrom('A-SECRET-VALUE', 'QS1TRUNSRVQtVkFMVUU=', 'A%2DSECRET%2DVALUE')),
    slot: fc.constantFrom('a_secret', 'b_secret', 'who', '1bad', ''),
    name: fc.constantFrom('out', 'x y', ''),
    key: fc.constantFrom('Enter', 'Control+A', 'NoSuchKey', ''),
    files: fc.constantFrom('/etc/passwd', '../x', ['a.txt']),
    page: fc.integer({ min: -1, max: 3 }),
    frame: target,
  },
  { requiredKeys: ['kind'] },
);

function extraFor(property: string): fc.Arbitrary<unknown> | undefined {
  switch (property) {
    case 'email':
      return fc.oneof(
        fc.constantFrom('owner@a.test', 'member@a.test', 'nobody@example.test', 'OWNER@A.TEST ', 'a@b', '@', 'x@y.z'.repeat(60)),
        fc.emailAddress(),
      );
    case 'password':
      return fc.constantFrom(PASSWORD, 'short', 'x'.repeat(1025), '');
    case 'org_id':
      return fc.constant(0).chain(() => fc.constantFrom(A.org, B.org, 'nope'));
    case 'flow_digest':
      return fc.constant(0).chain(() => fc.constantFrom(A.digest, `sha256:${'f'.repeat(64)}`, 'md5:x'));
    case 'url':
    case 'site':
      return fc.constantFrom(
        'https://hooks.a.test/x',
        'http://127.0.0.1:1/x',
        'http://169.254.169.254/latest',
        'ftp://x.test/',
        'https://user:pw@x.test/',
        'not a url',
        `https://${'x'.repeat(3000)}.test`,
      );
    case 'cron':
      return fc.constantFrom('* * * * *', '0 3 29 2 *', '@daily', '*/1 * * * * *', '0 0 31 2 *', '60 * * * *', '* * * * * * *', '0,1 * * * * *', '');
    case 'timezone':
      return fc.constantFrom('Europe/Berlin', 'UTC', 'Mars/Olympus', '', '../../etc/localtime');
    case 'inputs':
      return fc.constantFrom({ who: 'x' }, { who: 5 }, { a_secret: 'x' }, { b_secret: 'x' }, JSON.parse('{"__proto__":{"who":1}}'), {
        who: 'y'.repeat(100_000),
      });
    case 'name':
      return fc.constantFrom('greet', 'b-flow', 'a-draft', 'b-draft', 'new-flow', 'UPPER', '-x', 'get-run-status', 'a.txt');
    case 'automations':
      return fc.constantFrom(['greet'], ['b-flow'], [], ['*'], ['greet', 'greet']);
    case 'captured_ops':
      return opArb;
    case 'content_base64':
      return fc.constantFrom('eA==', '!!!', '', 'x'.repeat(10), Buffer.from('A-SECRET-VALUE').toString('base64'));
    case 'value':
      return fc.constantFrom('A-SECRET-VALUE', 'v', '');
    default:
      return undefined;
  }
}

export interface Req {
  method: string;
  path: string;
  query: [string, string][];
  cred: Cred;
  contentType: string | undefined;
  body: string | Uint8Array | undefined;
  extraHeaders: Record<string, string>;
}

const originArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ origin: 'https://evil.test' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }) },
);
const headerArb = fc
  .tuple(
    originArb,
    fc.oneof(
      { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Record<string, string>>(
          { 'last-event-id': '3' },
          { 'last-event-id': 'x' },
          { 'last-event-id': '99999999999' },
          { 'content-encoding': 'gzip' },
          { 'x-forwarded-for': '10.0.0.1' },
          { accept: 'text/event-stream' },
          { accept: 'application/xml' },
        ),
      },
    ),
  )
  .map(([a, b]) => ({ ...a, ...b }));

const queryArb = (names: string[]) =>
  fc.array(
    fc.tuple(
      fc.oneof({ weight: 3, arbitrary: names.length ? fc.constantFrom(...names) : fc.constant('x') }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }),
      fc.oneof(
        fc.constantFrom('1', '0', '-1', '200', '201', '50', 'abc', '', '1e3', 'b-flow', 'greet'),
        anyString.map((s) => s.slice(0, 2000)),
      ),
    ),
    {
      maxLength: 3,
    },
  );

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

export interface OpenApiOp {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

export function routeArb(route: ServiceRoute, op: OpenApiOp | undefined, components: Record<string, JsonSchema>): fc.Arbitrary<Req> {
  const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const queryNames = (op?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const schema = op?.requestBody?.content?.['application/json']?.schema;
  // A route without a body schema gets `{}` (or nothing) mostly: its handler should run.
  const value = schema
    ? schemaArb(schema, { components, extra: extraFor })
    : fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: junkValue });
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(route.method.toUpperCase()) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path: fc.tuple(...params.map(() => paramArb)).map((vals) => {
      let i = 0;
      return route.path.replace(/\{[^}]+\}/g, () => vals[i++]!);
    }),
    query: queryArb(queryNames),
    cred: credArb(route.auth),
    contentType: contentTypeArb,
    body: bodyArb(value),
    extraHeaders: headerArb,
  });
}

/** The gateway, by body: its flow names, inputs good and bad, with A's keys mostly. */
export const gatewayArb = (): fc.Arbitrary<Req> =>
  fc.record({
    method: fc.constant('POST'),
    path: fc
      .oneof(
        { weight: 6, arbitrary: fc.constant('greet') },
        { weight: 3, arbitrary: fc.constantFrom('b-flow', 'a-draft', 'b-draft', 'GREET', 'greet%2F..', 'nope') },
        { weight: 1, arbitrary: paramArb },
      )
      .map((f) => `/v1/run/${f}`),
    query: queryArb(['inputs', 'who']),
    cred: credArb('bearer'),
    contentType: contentTypeArb,
    body: bodyArb(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record(
            {
              inputs: fc.oneof(
                fc.record({ who: fc.oneof(anyString, junkValue) }, { requiredKeys: [] }),
                fc.dictionary(fc.string({ maxLength: 10 }), junkValue, { maxKeys: 3 }),
                extraFor('inputs')!,
                junkValue,
              ),
            },
            { requiredKeys: [] },
          ),
        },
        { weight: 1, arbitrary: junkValue },
      ),
    ),
    extraHeaders: headerArb,
  });

/** MCP JSON-RPC messages (single and batched) and the headers the transport reads. */
export const mcpArb = (): fc.Arbitrary<Req> => {
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constantFrom(null, 1.5, { a: 1 }, [], true));
  const toolName = fc.constantFrom('greet', 'b-flow', 'b-draft', 'get-run-status', '', '../greet', 'x'.repeat(300));
  const objectParams = fc.oneof(
    fc.record(
      {
        name: toolName,
        arguments: fc.oneof(
          fc.record({ who: fc.oneof(anyString, junkValue) }, { requiredKeys: [] }),
          fc.record({ run_id: fc.constant(0).chain(() => fc.constantFrom(A.run, B.run, B.execution, 'x')) }),
          junkValue,
        ),
        _meta: fc.option(fc.record({ progressToken: fc.oneof(fc.string(), fc.integer()) }), { nil: undefined }),
      },
      { requiredKeys: ['name'] },
    ),
    fc.record(
      {
        protocolVersion: fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', ''),
        capabilities: junkValue,
        clientInfo: fc.oneof(fc.constant({ name: 'fuzz', version: '1' }), junkValue),
      },
      { requiredKeys: [] },
    ),
    fc.record({ cursor: anyString }, { requiredKeys: [] }),
    fc.dictionary(fc.string({ maxLength: 8 }), junkValue, { maxKeys: 3 }),
  );
  const params = fc.oneof({ weight: 4, arbitrary: objectParams }, { weight: 1, arbitrary: junkValue });
  const method = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'tools/call',
        'tools/call',
        'tools/list',
        'initialize',
        'ping',
        'notifications/initialized',
        'notifications/cancelled',
        'resources/list',
        'prompts/get',
        'logging/setLevel',
        'completion/complete',
      ),
    },
    { weight: 1, arbitrary: anyString.map((s) => s.slice(0, 500)) },
  );
  // Well-formed requests mostly (so the handlers run), and every way a message can be malformed.
  const message = fc.oneof(
    { weight: 5, arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), method, params: objectParams }) },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', 2, null) }),
          id,
          method,
          params,
          result: junkValue,
          error: junkValue,
        },
        { requiredKeys: ['jsonrpc'] },
      ),
    },
  );
  const body = fc.oneof({ weight: 6, arbitrary: message }, { weight: 1, arbitrary: fc.array(message, { maxLength: 4 }) }, { weight: 1, arbitrary: junkValue });
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path: fc.constant('/mcp'),
    query: queryArb(['sessionId']),
    cred: credArb('bearer'),
    contentType: contentTypeArb,
    body: bodyArb(body),
    extraHeaders: fc
      .tuple(
        headerArb,
        fc.constantFrom<Record<string, string>>(
          { accept: 'application/json, text/event-stream' },
          { accept: 'text/event-stream, application/json' },
          { accept: 'text/event-stream' },
          { accept: 'application/json' },
          {},
          { accept: '*/*' },
          { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '1999-01-01' },
          { accept: 'application/json, text/event-stream', 'mcp-session-id': 'nope' },
          { accept: 'application/json, text/event-stream', origin: 'https://evil.test' },
        ),
      )
      .map(([a, b]) => ({ ...a, ...b })),
  });
};

/** Requests off the table: other methods on known paths, unknown paths under the API's prefixes. */
export const offTableArb = (routes: readonly ServiceRoute[]): fc.Arbitrary<Req> =>
  fc.record({
    method: fc.constantFrom(...METHODS, 'PROPFIND', 'LOCK'),
    path: fc.oneof(
      fc.constantFrom(...routes.map((r) => r.path)).chain((p) => paramArb.map((v) => p.replace(/\{[^}]+\}/g, v))),
      fc.constantFrom(
        '/api',
        '/api/',
        '/api/nope',
        '/api//keys',
        '/api/keys/',
        '/api/../api/keys',
        '/api/%2e%2e/keys',
        '/v1',
        '/v1/run',
        '/v1/run/',
        '/v1/run/greet/extra',
        '/mcp/x',
        '/api/runs//stream',
        '/openapi.json',
        '/healthz',
        '/readyz',
        '/docs',
      ),
      fc.integer({ min: 1, max: 9000 }).map((n) => `/api/${'a'.repeat(n)}`),
    ),
    query: queryArb(['limit', 'cursor', 'flow']),
    cred: credArb('mixed'),
    contentType: contentTypeArb,
    body: bodyArb(junkValue),
    extraHeaders: headerArb,
  });
