import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveNodeHttp, type NodeHttpServer } from '../../adapters/node-http/index.js';
import { createLauncher } from '../../src/launcher/launcher.js';
import type { Engine } from '../../src/engine/types.js';
import { fixtureEngine, compileOrThrow, GREET, FAILS } from '../conformance/transport-fixtures.js';
import { below, prng, testSeed } from '../helpers/seeded.js';
import { rawExchange, type RawAnswer } from './rest-helpers.js';

// A seeded fuzz probe of the REST launcher as `flowctl serve` runs it (createLauncher on the
// node-http adapter; issue 12, "Acceptance"): thousands of hostile requests, over raw sockets and
// over fetch, against a token-less and a token-guarded launcher. No answer may be a 5xx, and every
// answer's body is structured JSON as docs/rest.md says: `{error, message}`, `{code, message}` on
// the replay route, or a Run / discovery list / OpenAPI document on success.

const SEED = testSeed(0x0f_0220_12);
const RAW_REQUESTS = 1_600;
const FETCH_REQUESTS = 800;
const CONCURRENCY = 8;
const TOKEN = 'fuzz-token-0123456789abcdef';
const MIB = 1024 * 1024;

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[below(r, xs.length)]!;
const chance = (r: Rand, p: number) => r() < p;

function randomBytes(r: Rand, n: number, from = 0, to = 256): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(from + below(r, to - from));
  return s;
}

function uuidLike(r: Rand, known: string): string {
  return pick(r, [
    known,
    known.toUpperCase(),
    randomUUID(),
    '00000000-0000-4000-8000-000000000000',
    'not-a-uuid',
    `${known}0`,
    known.slice(1),
    known.replace(/-/g, ''),
    '00000000-0000-0000-0000-00000000000g',
    encodeURIComponent(`${known}/../..`),
    '%00',
    '',
    'x'.repeat(300),
    `{${known}}`,
  ]);
}

function deepText(r: Rand): string {
  const depth = pick(r, [64, 1_000, 10_000, 100_000, 400_000]);
  switch (below(r, 4)) {
    case 0:
      return '['.repeat(depth) + ']'.repeat(depth);
    case 1:
      return '['.repeat(Math.min(depth, MIB - 1)); // never closed
    case 2:
      return `{"who":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    default:
      return `{"mode":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  }
}

/** A request body: every JSON type, flow inputs good and bad, broken text and bytes. */
function body(r: Rand): string {
  return pick<() => string>(r, [
    () => 'null',
    () => 'true',
    () => 'false',
    () => '0',
    () => '-1.5e308',
    () => '1e999',
    () => '"text"',
    () => '[]',
    () => '{}',
    () => '[{"who":"x"}]',
    () => '{"who":"Ada"}',
    () => '{"who":"Ada","times":3}',
    () => '{"who":1}',
    () => '{"who":"a","times":"many","extra":true}',
    () => '{"who":"a","api_key":"plain secret"}',
    () => '{"who":"a","api_key":"secret:other"}',
    () => '{"mode":"verify"}',
    () => '{"mode":"rerun"}',
    () => '{"mode":"hermetic"}',
    () => '{"mode":null}',
    () => '{"__proto__":{"polluted":1},"who":"p"}',
    () => '{"constructor":{"prototype":{"x":1}}}',
    () => '{"who":"\\u0000\\ud800"}',
    () => '{"who":',
    () => '{"who":"x"}}',
    () => '\ufeff{"who":"bom"}',
    () => '  ',
    () => '',
    () => randomBytes(r, below(r, 64)),
    () => Buffer.from(randomBytes(r, below(r, 32), 0x80), 'latin1').toString('latin1'),
    () => deepText(r),
    () => `{"who":"${'w'.repeat(below(r, 4) === 0 ? MIB : 2048)}"}`,
    () => `{"who":"big"}${' '.repeat(MIB + below(r, 100))}`,
  ])();
}

const TARGETS = [
  '/flows/greet/runs',
  '/flows/greet/runs',
  '/flows/fails/runs',
  '/flows/fails/runs',
  '/',
  '/flows',
  '/flows/',
  '/flows/greet/runs',
  '/flows/fails/runs',
  '/flows/nope/runs',
  '/flows/greet/runs/',
  '/openapi.json',
  '/flows/../runs',
  '/flows/%2e%2e/runs',
  '/flows/..%2f..%2fetc%2fpasswd/runs',
  '//flows',
  '/flows/%00/runs',
  '/flows/%zz/runs',
  '/flows/gr%65et/runs',
  '/FLOWS',
  '/.env',
  '/flows/greet/runs?mode=async',
  '/flows/greet/runs?mode=sync',
  '/flows/fails/runs?mode=async',
  '/flows/greet/runs?mode=later',
  '/flows/greet/runs?mode=async&mode=sync',
  '/flows/greet/runs?%zz=1',
];

const RUN_TARGETS = (r: Rand, known: string) => [
  `/runs/${uuidLike(r, known)}`,
  `/runs/${uuidLike(r, known)}/replay`,
  `/runs/${uuidLike(r, known)}/replay?mode=x`,
];

/** A request target; `hostile` mangles it (backslashes, raw bytes, odd characters, length, absolute form). */
function target(r: Rand, known: string, hostile = chance(r, 0.5)): string {
  const base = chance(r, 0.35) ? pick(r, RUN_TARGETS(r, known)) : pick(r, TARGETS);
  if (!hostile) return base;
  switch (below(r, 6)) {
    case 0:
      return base.replace(/\//g, '\\');
    case 1:
      return base + randomBytes(r, 1 + below(r, 6), 0x80);
    case 2:
      return `${base}/${randomBytes(r, 1 + below(r, 4), 0x21, 0x7f)}`;
    case 3:
      return base + '/x'.repeat(below(r, 4) === 0 ? 5_000 : 50);
    case 4:
      return `http://127.0.0.1${base}`;
    default:
      return `${base}#${randomBytes(r, 3, 0x21, 0x7f)}`;
  }
}

function hostHeader(r: Rand, port: number, hostile: boolean): [string, string][] {
  if (!hostile) return [['Host', pick(r, [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost'])]];
  return pick<[string, string][]>(r, [
    [['Host', 'attacker.example']],
    [['Host', `attacker.example:${port}`]],
    [['Host', '127.0.0.1.nip.io']],
    [['Host', '127.0.0.1:99999']],
    [['Host', '127.0.0.1:80@attacker.example']],
    [['Host', '']],
    [],
    [
      ['Host', `127.0.0.1:${port}`],
      ['Host', 'attacker.example'],
    ],
    [['Host', randomBytes(r, 8, 0x80)]],
  ]);
}

interface RawCase {
  label: string;
  payload: Buffer;
  head: boolean;
  /** The client cuts the request short: the body is incomplete and the client ends its side. */
  halfClose: boolean;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON;charset="UTF-8"',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zz',
  'application/json-patch+json',
  '',
  '*/*',
];

const DIMENSIONS = ['method', 'version', 'target', 'host', 'origin', 'auth', 'headers', 'type', 'encoding', 'framing', 'body'] as const;

/** One raw request: well-formed in most respects, hostile in a few (seeded) dimensions. */
function rawCase(r: Rand, port: number, known: string): RawCase {
  const hostile = new Set<string>();
  const n = pick(r, [0, 1, 1, 1, 2, 2, 3]);
  for (let i = 0; i < n; i++) hostile.add(pick(r, DIMENSIONS));
  const is = (d: (typeof DIMENSIONS)[number]) => hostile.has(d);
  // PRI (the HTTP/2 preface) makes Node wait for more bytes: it is answered by the idle close, so it is rare.
  const method = is('method')
    ? chance(r, 0.05)
      ? 'PRI'
      : pick(r, ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'FOO', 'get', 'G\u00e9T', 'GE T', 'POST\x00'])
    : pick(r, ['GET', 'GET', 'POST', 'POST', 'POST', 'HEAD']);
  const version = is('version') ? pick(r, ['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.9', 'HTTP/x', '', 'HTTP/1.1 extra']) : 'HTTP/1.1';
  const headers: [string, string][] = [...hostHeader(r, port, is('host')), ['Connection', 'close']];
  if (is('origin') || chance(r, 0.1)) {
    headers.push([
      'Origin',
      is('origin')
        ? pick(r, ['https://attacker.example', 'null', 'file://', `http://attacker.example:${port}`, 'http://127.0.0.1.nip.io'])
        : pick(r, [`http://localhost:${port}`, 'http://127.0.0.1:5173', 'http://[::1]']),
    ]);
  }
  if (is('auth') || chance(r, 0.2))
    headers.push([
      'Authorization',
      is('auth') ? pick(r, ['Bearer wrong', `Basic ${TOKEN}`, 'Bearer', `Bearer ${TOKEN} x`, `bearer${TOKEN}`]) : `Bearer ${TOKEN}`,
    ]);
  if (is('headers')) {
    switch (below(r, 5)) {
      case 0:
        headers.push(['X-Big', 'h'.repeat(pick(r, [9_000, 20_000, 70_000]))]);
        break;
      case 1:
        headers.push([randomBytes(r, 6, 0x21, 0x7f), randomBytes(r, 12, 0x00, 0x100)]);
        break;
      case 2:
        for (let i = 0; i < 300; i++) headers.push([`X-H${i}`, String(i)]);
        break;
      case 3:
        headers.push(['Expect', '100-continue']);
        break;
      default:
        headers.push(['X-Folded', 'a\r\n b']);
    }
  }
  const text = method === 'GET' || method === 'HEAD' ? (is('body') ? body(r) : '') : body(r);
  const bytes = Buffer.from(text, is('body') && chance(r, 0.5) ? 'latin1' : 'utf8');
  if (is('type')) {
    const t = pick(
      r,
      CONTENT_TYPES.filter((c) => !/^application\/json(;|$)/i.test(c) || /latin1/.test(c)),
    );
    if (t !== '' || chance(r, 0.5)) headers.push(['Content-Type', t]);
  } else if (text !== '') {
    headers.push(['Content-Type', pick(r, ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"'])]);
  }
  if (is('encoding')) headers.push(['Content-Encoding', pick(r, ['gzip', 'br', 'deflate, gzip', 'x-custom', 'identity, gzip'])]);
  let framed: Buffer = bytes;
  let halfClose = false;
  if (!is('framing')) {
    headers.push(['Content-Length', String(bytes.length)]);
  } else {
    switch (below(r, 6)) {
      case 0: {
        // Chunked, sometimes in a coding the launcher does not decode.
        const coding = pick(r, ['chunked', 'gzip, chunked', 'deflate, chunked', 'chunked, chunked', 'identity', 'gzip']);
        headers.push(['Transfer-Encoding', coding]);
        const payload = coding.startsWith('gzip') ? gzipSync(bytes) : bytes;
        framed =
          bytes.length === 0
            ? Buffer.from('0\r\n\r\n')
            : Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]);
        break;
      }
      case 1:
        // Truncated: a length longer than what is sent, then the client ends its side.
        headers.push(['Content-Length', String(bytes.length + 1 + below(r, 100))]);
        halfClose = true;
        break;
      case 2:
        headers.push(['Content-Length', pick(r, ['-1', 'abc', '1e3', ' 5', '99999999999999999999', `${bytes.length}, ${bytes.length + 1}`])]);
        break;
      case 3:
        headers.push(['Content-Length', String(bytes.length)], ['Transfer-Encoding', 'chunked']);
        break;
      case 4:
        headers.push(['Content-Length', String(bytes.length)], ['Content-Length', String(bytes.length + 3)]);
        break;
      default:
        // A chunked body cut short: the client ends its side before the last chunk.
        headers.push(['Transfer-Encoding', 'chunked']);
        framed = Buffer.concat([Buffer.from(`${(bytes.length + 10).toString(16)}\r\n`), bytes]);
        halfClose = true;
    }
  }
  const head = `${method} ${target(r, known, is('target'))} ${version}`.trimEnd();
  const payload = Buffer.concat([Buffer.from(`${head}\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1'), framed]);
  return {
    label: `${[...hostile].join('+') || 'plain'}: ${head.slice(0, 120)} [${headers
      .map(([k]) => k)
      .join(',')
      .slice(0, 200)}]`,
    payload,
    head: method === 'HEAD',
    halfClose,
  };
}

interface Outcome {
  via: 'raw' | 'fetch';
  label: string;
  status?: number;
  contentType?: string;
  body: string;
  head: boolean;
  /** Closed without any answer. */
  unanswered: boolean;
}

/** Why an answer breaks the rules, or undefined when it keeps them. */
function violation(o: Outcome): string | undefined {
  if (o.unanswered) return 'no answer at all';
  if (o.status === undefined) return 'no parseable status line';
  if (o.status >= 500) return `status ${o.status}`;
  if (o.status === 101 || o.status < 200) return `status ${o.status}`;
  if (!/^application\/json/i.test(o.contentType ?? '')) return `content-type ${o.contentType}`;
  // A HEAD answer has no body, unless Node's parser refused the request before knowing it was HEAD.
  if (o.head && o.body === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(o.body);
  } catch {
    return 'body is not JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'body is not a JSON object';
  const b = parsed as Record<string, unknown>;
  if (o.status >= 400) {
    const styled = (typeof b.error === 'string' || typeof b.code === 'string') && typeof b.message === 'string';
    if (!styled) return 'error body is neither {error, message} nor {code, message}';
    if (/\n\s+at /.test(String(b.message))) return 'error message carries a stack trace';
  }
  return undefined;
}

async function pool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('REST launcher fuzz (seeded, loopback)', () => {
  let engine: Engine;
  let open: NodeHttpServer;
  let guarded: NodeHttpServer;
  let known: string;

  beforeAll(async () => {
    engine = fixtureEngine();
    const flows = [
      { name: 'greet', spec: compileOrThrow(GREET) },
      { name: 'fails', spec: compileOrThrow(FAILS) },
    ];
    // A short idle time, so requests that never finish arriving end quickly (with their 408).
    open = await serveNodeHttp(createLauncher({ engine, flows }), { idleTimeoutMs: 1_500 });
    guarded = await serveNodeHttp(createLauncher({ engine, flows, token: TOKEN }), { idleTimeoutMs: 1_500 });
    const res = await fetch(`${open.url}/flows/greet/runs`, { method: 'POST', body: '{"who":"seed"}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    known = ((await res.json()) as { id: string }).id;
  });

  afterAll(async () => {
    await Promise.all([open?.close(), guarded?.close()]);
    await engine?.dispose();
  });

  it(`answers ${RAW_REQUESTS} raw-socket and ${FETCH_REQUESTS} fetch requests without a 5xx, every body structured (seed ${SEED})`, async () => {
    const r = prng(SEED);
    const outcomes: Outcome[] = [];

    const raws = Array.from({ length: RAW_REQUESTS }, () => {
      const server = chance(r, 0.2) ? guarded : open;
      return { server, c: rawCase(r, server.port, known) };
    });
    await pool(raws, CONCURRENCY, async ({ server, c }) => {
      const a: RawAnswer = await rawExchange(server.port, c.payload, { halfClose: c.halfClose, boundMs: 60_000 });
      outcomes.push({
        via: 'raw',
        label: c.label,
        status: a.status,
        contentType: a.headers['content-type'],
        body: a.body,
        head: c.head,
        unanswered: a.received === '',
      });
    });

    const fetches = Array.from({ length: FETCH_REQUESTS }, () => {
      const server = chance(r, 0.2) ? guarded : open;
      const method = pick(r, ['GET', 'POST', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'FOO']);
      const path = target(r, known).replace(/^http:\/\/127\.0\.0\.1/, '');
      const headers: Record<string, string> = {};
      if (chance(r, 0.7)) headers['content-type'] = pick(r, CONTENT_TYPES) || 'application/json';
      if (chance(r, 0.25)) headers.origin = pick(r, ['https://attacker.example', 'null', 'http://localhost:3000']);
      if (chance(r, 0.2)) headers.authorization = pick(r, [`Bearer ${TOKEN}`, 'Bearer nope']);
      if (chance(r, 0.1)) headers['content-encoding'] = pick(r, ['gzip', 'identity', 'br']);
      const text = method === 'GET' || method === 'HEAD' ? undefined : body(r);
      return { server, method, path, headers, text };
    });
    await pool(fetches, CONCURRENCY, async (f) => {
      // Only ever the server's own origin: the path goes in through the URL setters (a path such
      // as `\\flows` given to new URL() would name another host).
      const url = new URL(f.server.url);
      const q = f.path.indexOf('?');
      url.pathname = q < 0 ? f.path : f.path.slice(0, q);
      if (q >= 0) url.search = f.path.slice(q);
      if (url.origin !== new URL(f.server.url).origin) throw new Error(`fuzz URL left loopback: ${url.href}`);
      const res = await fetch(url, { method: f.method, headers: f.headers, body: f.text });
      outcomes.push({
        via: 'fetch',
        label: `${f.method} ${url.pathname.slice(0, 120)}${url.search.slice(0, 40)} ${JSON.stringify(f.headers).slice(0, 200)}`,
        status: res.status,
        contentType: res.headers.get('content-type') ?? undefined,
        body: await res.text(),
        head: f.method === 'HEAD',
        unanswered: false,
      });
    });

    expect(outcomes.length).toBe(RAW_REQUESTS + FETCH_REQUESTS);
    if (process.env.FLOWCTL_FUZZ_STATS) {
      const counts: Record<string, number> = {};
      for (const o of outcomes) counts[`${o.via} ${o.status}`] = (counts[`${o.via} ${o.status}`] ?? 0) + 1;
      process.stderr.write(`${JSON.stringify(counts)}\n`);
    }
    const bad = outcomes.map((o) => ({ o, why: violation(o) })).filter((x) => x.why !== undefined);
    expect(bad.slice(0, 10).map(({ o, why }) => `${why}: ${o.via} ${o.label} -> ${o.status} ${JSON.stringify(o.body.slice(0, 160))}`)).toEqual([]);
    // The probe reached every layer: the router's answers, Node's parser, the refusals of defects 3-8.
    const statuses = new Set(outcomes.map((o) => o.status));
    for (const s of [200, 400, 401, 403, 404, 405, 413, 415, 422]) expect({ status: s, seen: statuses.has(s) }).toEqual({ status: s, seen: true });
    expect(Math.max(...outcomes.map((o) => o.status ?? 0))).toBeLessThan(500);
  });
});
