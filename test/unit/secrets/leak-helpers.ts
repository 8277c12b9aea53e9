import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';

/**
 * Helpers of the secret-leak tests: the encodings a secret can take on its way out, a loopback
 * server that echoes what it receives in many of them, and secret generators with every character
 * class.
 */

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const b64 = (s: string) => utf8(s).toString('base64');
const b64url = (s: string) => utf8(s).toString('base64url');

export function htmlNamed(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Every character that is not a letter or digit as a numeric entity (decimal or hex). */
export function htmlNumeric(s: string, hex = false): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out += /[A-Za-z0-9]/.test(ch) ? ch : hex ? `&#x${cp.toString(16)};` : `&#${cp};`;
  }
  return out;
}

export function formEncoded(s: string): string {
  return new URLSearchParams([['k', s]]).toString().slice(2);
}

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());

/** The parts of a secret an HTTP header or a URL keeps: HTTP trims the ends, the URL parser drops tabs and newlines. */
function trimmedForms(s: string): string[] {
  return [s.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ''), s.replace(/[\t\n\r]/g, ''), s.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')];
}

/**
 * The forms a secret may take in text the engine writes out. A test finds none of them in any
 * output. Forms shorter than 6 characters are left out (they would be found by chance).
 */
export function encodingsOf(secret: string): string[] {
  const forms = new Set<string>();
  for (const s of [secret, ...trimmedForms(secret)]) {
    if (utf8(s).length < 6) continue;
    const userinfo = new URL('http://h/');
    userinfo.username = 'user';
    userinfo.password = s;
    const query = new URL('http://h/');
    query.search = `?x=${s}`;
    const json = JSON.stringify(s).slice(1, -1);
    for (const f of [
      s,
      encodeURIComponent(s),
      lowerHex(encodeURIComponent(s)),
      encodeURI(s),
      formEncoded(s),
      lowerHex(formEncoded(s)),
      userinfo.password,
      query.search.slice(3),
      b64(s),
      b64url(s),
      b64(`user:${s}`),
      b64url(`user:${s}`),
      json,
      JSON.stringify(json).slice(1, -1),
      htmlNamed(s),
      htmlNumeric(s),
      htmlNumeric(s, true),
    ]) {
      forms.add(f);
    }
  }
  for (const s of [secret, ...trimmedForms(secret)]) for (const f of reencodedFormsOf(s)) forms.add(f);
  return [...forms].filter((f) => f.length >= 6);
}

/**
 * The re-encoded forms of a secret of at least 8 characters (ends trimmed; the floor of
 * src/secrets/encodings.ts): upper-cased, lower-cased, hex of its UTF-8 bytes in either case.
 */
export function reencodedFormsOf(secret: string): string[] {
  if ([...secret.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')].length < 8) return [];
  const hex = utf8(secret).toString('hex');
  return [secret.toUpperCase(), secret.toLowerCase(), hex, hex.toUpperCase()];
}

/** The first form of `secret` found in `text`, or undefined. */
export function leakIn(text: string, secret: string): string | undefined {
  return encodingsOf(secret).find((f) => text.includes(f));
}

/** Every string leaf (keys too) of a JSON value, joined: what a search of its text must cover. */
export function textsOf(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(value);
  return `${out.join('\n')}\n${JSON.stringify(value)}`;
}

// ---------------------------------------------------------------------------------------------
// Secret generators

const ASCII_PUNCT = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];
const NON_ASCII = [...'éßüøñçÅ€中文жЯ€ﬁ\u00a0\u2028\u200b'];
const ASTRAL = ['😀', '𝄞', '🔑', '𐍈', '🇫🇷'];

/** One character of any class: letters, digits, ASCII punctuation, space, tab, non-ASCII, astral. */
export const secretChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') },
  { weight: 3, arbitrary: fc.constantFrom(...ASCII_PUNCT) },
  { weight: 1, arbitrary: fc.constantFrom(' ', ' ', '+', '/', '=', '%', '&', '?', '#', '"', '\\', "'") },
  { weight: 1, arbitrary: fc.constantFrom(...NON_ASCII) },
  { weight: 1, arbitrary: fc.constantFrom(...ASTRAL) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
);

/** A secret of 6 to 24 characters (at least 6 UTF-8 bytes): long enough that no form of it is found by chance. */
export const secretArb: fc.Arbitrary<string> = fc
  .array(secretChar, { minLength: 6, maxLength: 24 })
  .map((chars) => chars.join(''))
  .filter((s) => utf8(s).length >= 6 && s.trim().length >= 4);

// ---------------------------------------------------------------------------------------------
// Echo server

export interface EchoServer {
  base: string;
  /** Secrets the server received (decoded), to check the requests really carried them. */
  received: string[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A careless API, echoing what it receives in every encoding it can think of. */
function derived(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  return {
    plain: value,
    b64: b64(value),
    b64url: b64url(value),
    basic: `Basic ${b64(`user:${value}`)}`,
    uri: encodeURIComponent(value),
    form: formEncoded(value),
    html: htmlNamed(value),
    entities: htmlNumeric(value),
    json: JSON.stringify({ value }),
    upper: value.toUpperCase(),
    lower: value.toLowerCase(),
    hex: utf8(value).toString('hex'),
    HEX: utf8(value).toString('hex').toUpperCase(),
  };
}

/**
 * Routes: `/echo` (JSON of the request: url, query, headers, body, and every received value in many
 * encodings; the value also comes back in response headers), `/redirect?k=` (302 to `/landing` with
 * the value in the path and the query), `/landing` (JSON of its url), `/html` (the body back as HTML
 * entities).
 */
export async function startEchoServer(): Promise<EchoServer> {
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = await readBody(req);
      const k = url.searchParams.get('k') ?? undefined;
      const raw = url.searchParams.get('raw') ?? undefined;
      const header = typeof req.headers['x-token'] === 'string' ? req.headers['x-token'] : undefined;
      let json: string | undefined;
      try {
        const parsed = JSON.parse(body) as { t?: unknown };
        if (typeof parsed?.t === 'string') json = parsed.t;
      } catch {
        // not JSON
      }
      for (const v of [k, header, json]) if (v !== undefined) received.push(v);
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: `/landing/${encodeURIComponent(k ?? '')}?e=${formEncoded(k ?? '')}&b=${b64url(k ?? '')}` });
        res.end();
        return;
      }
      if (url.pathname.startsWith('/landing')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ url: req.url }));
        return;
      }
      if (url.pathname === '/html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-echo-b64': b64(body) });
        res.end(`<p title="${htmlNamed(body)}">${htmlNumeric(body)}</p><pre>${htmlNumeric(body, true)}</pre>`);
        return;
      }
      const echoed = k ?? header ?? json ?? '';
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-echo-uri': encodeURIComponent(echoed),
        'x-echo-b64': b64(echoed),
        'set-cookie': [`k=${formEncoded(echoed)}; Path=/`, `b=${b64url(echoed)}; Path=/`],
      });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body,
          k: derived(k),
          raw: derived(raw),
          header: derived(header),
          json: derived(json),
        }),
      );
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * The leak flow: the secret goes out in a query (`query:`), raw in a URL, in a JSON body, as a text
 * body, through a redirect, into core/template, and (last, since not every secret is a valid header
 * value) in headers.
 */
export function leakFlow(base: string): string {
  return `name: leak
inputs:
  token: {type: string, secret: true}
steps:
  - id: q
    tool: http/request@1
    args:
      method: POST
      url: ${base}/echo
      query: {k: "\${inputs.token}"}
      json: {t: "\${inputs.token}"}
  - id: raw
    tool: http/request@1
    args:
      url: "${base}/echo?raw=\${inputs.token}"
  - id: redir
    tool: http/request@1
    args:
      url: ${base}/redirect
      query: {k: "\${inputs.token}"}
  - id: html
    tool: http/request@1
    args:
      method: POST
      url: ${base}/html
      body: "\${inputs.token}"
  - id: tpl
    tool: core/template@1
    args:
      template: "{{ a }} | {{ b }} | {{ c }}"
      values: {a: "\${steps.q.output}", b: "\${steps.redir.output.url}", c: "\${steps.html.output}"}
  - id: h
    tool: http/request@1
    args:
      url: ${base}/echo
      headers: {x-token: "\${inputs.token}", authorization: "Bearer \${inputs.token}"}
output:
  q: \${steps.q.output}
  raw: \${steps.raw.output}
  redir: \${steps.redir.output}
  html: \${steps.html.output}
  text: \${steps.tpl.output.text}
  h: \${steps.h.output}
`;
}

/** A flow whose one step fails with the secret in its URL's userinfo (fetch refuses credentials in a URL). */
export function userinfoFlow(base: string): string {
  const { host } = new URL(base);
  return `name: userinfo
inputs:
  token: {type: string, secret: true}
steps:
  - id: u
    tool: http/request@1
    args:
      url: "http://user:\${inputs.token}@${host}/echo"
`;
}
