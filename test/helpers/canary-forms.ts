import { prng, below } from './seeded.js';

/**
 * A secret canary and the forms it can take on its way out (test/e2e/hosted-canary.test.ts,
 * docs/hosted-api.md "Security tests"), as text (for answers, streams, webhook bodies, log lines,
 * logical database dumps) and as bytes (for files, pg_dump output and artifacts).
 */

/** Characters that each encode differently: URL, form, JSON, HTML, Latin-1, astral (a surrogate pair). */
export const CANARY_SPECIALS = [' ', '+', '/', '=', '&', '%', '"', '\\', '<', '>', "'", '#', '?', ':', ';', 'é', 'ß', '€', '😀'];

/**
 * A long random canary from `seed`: 2 to 4 random letters and digits before each special character,
 * the specials in a seeded order (about 75 characters).
 */
export function makeCanary(seed: number): string {
  const next = prng(seed);
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const specials = [...CANARY_SPECIALS];
  for (let i = specials.length - 1; i > 0; i--) {
    const j = below(next, i + 1);
    [specials[i], specials[j]] = [specials[j]!, specials[i]!];
  }
  let out = 'Cn';
  for (const s of specials) {
    const n = 2 + below(next, 3);
    for (let i = 0; i < n; i++) out += alnum[below(next, alnum.length)];
    out += s;
  }
  for (let i = 0; i < 4; i++) out += alnum[below(next, alnum.length)];
  return out;
}

const htmlNamed = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const htmlNumeric = (s: string) => [...s].map((ch) => (/[A-Za-z0-9]/.test(ch) ? ch : `&#${ch.codePointAt(0)};`)).join('');
const asciiJson = (s: string) =>
  JSON.stringify(s)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
const formEncoded = (s: string) => new URLSearchParams([['k', s]]).toString().slice(2);
/** The COPY text format of pg_dump: backslash, tab, newline, carriage return escaped. */
export const copyEscaped = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

/**
 * The base64 (or base64url) text that stands for `value` wherever it sits in longer base64 text: at
 * each of the three byte offsets, the characters that depend on the value's bytes alone (the one or
 * two at each end mix with neighbouring bytes and are left out), plus the complete encoding.
 */
function base64Forms(value: string, encoding: 'base64' | 'base64url'): { name: string; text: string }[] {
  const bytes = Buffer.from(value, 'utf8');
  const whole = bytes.toString(encoding);
  const out = [
    { name: `${encoding}`, text: whole },
    { name: `${encoding} unpadded`, text: whole.replace(/=+$/, '') },
  ];
  for (let offset = 0; offset < 3; offset++) {
    const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString(encoding);
    out.push({ name: `${encoding} at byte offset ${offset}`, text: text.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6)) });
  }
  return out;
}

export interface CanaryForm {
  name: string;
  text: string;
}

/**
 * Every text form searched for:
 * - the value itself, and each third of it alone (a value cut short, e.g. by a message's slice);
 * - percent-encoded (encodeURIComponent, upper and lower hex; encodeURI), form-encoded (space as +);
 * - JSON string escapes (JSON.stringify; with \u escapes for every non-ASCII character; twice);
 * - HTML escapes (named; numeric);
 * - base64 and base64url, whole, unpadded, and at each of the three byte alignments inside longer
 *   base64 text (a Basic credential);
 * - hex of the UTF-8 bytes (lower, upper);
 * - the UTF-8 bytes read as Latin-1 (mojibake).
 * Byte searches add UTF-16LE and UTF-16BE of the value (bytesForms).
 */
export function canaryForms(canary: string): CanaryForm[] {
  const third = Math.floor(canary.length / 3);
  const json = JSON.stringify(canary).slice(1, -1);
  const forms: CanaryForm[] = [
    { name: 'plain', text: canary },
    { name: 'first third', text: canary.slice(0, third) },
    { name: 'middle third', text: canary.slice(third, 2 * third) },
    { name: 'last third', text: canary.slice(2 * third) },
    { name: 'encodeURIComponent', text: encodeURIComponent(canary) },
    { name: 'encodeURIComponent, lower hex', text: lowerHex(encodeURIComponent(canary)) },
    { name: 'encodeURI', text: encodeURI(canary) },
    { name: 'form-encoded', text: formEncoded(canary) },
    { name: 'JSON-escaped', text: json },
    { name: 'JSON-escaped, ASCII only', text: asciiJson(canary) },
    { name: 'JSON-escaped twice', text: JSON.stringify(json).slice(1, -1) },
    { name: 'HTML named entities', text: htmlNamed(canary) },
    { name: 'HTML numeric entities', text: htmlNumeric(canary) },
    ...base64Forms(canary, 'base64'),
    ...base64Forms(canary, 'base64url'),
    { name: 'hex', text: Buffer.from(canary, 'utf8').toString('hex') },
    { name: 'HEX', text: Buffer.from(canary, 'utf8').toString('hex').toUpperCase() },
    { name: 'UTF-8 read as Latin-1', text: Buffer.from(canary, 'utf8').toString('latin1') },
  ];
  return forms.filter((f) => f.text.length >= 12);
}

export interface CanaryBytes {
  name: string;
  bytes: Buffer;
}

/** The byte forms: each text form as UTF-8 (and Latin-1 where that differs), the value as UTF-16LE/BE. */
export function canaryByteForms(canary: string): CanaryBytes[] {
  const out: CanaryBytes[] = [];
  for (const f of canaryForms(canary)) {
    out.push({ name: `${f.name} (UTF-8)`, bytes: Buffer.from(f.text, 'utf8') });
    if (/^[\u0000-\u00ff]*$/.test(f.text) && /[\u0080-\u00ff]/.test(f.text)) out.push({ name: `${f.name} (Latin-1)`, bytes: Buffer.from(f.text, 'latin1') });
  }
  const le = Buffer.from(canary, 'utf16le');
  const be = Buffer.from(le);
  be.swap16();
  out.push({ name: 'UTF-16LE', bytes: le }, { name: 'UTF-16BE', bytes: be });
  return out;
}

/** The names of the forms found in `text`. */
export function formsIn(text: string, forms: readonly CanaryForm[]): string[] {
  return forms.filter((f) => text.includes(f.text)).map((f) => f.name);
}

/** The names of the byte forms found in `bytes`. */
export function byteFormsIn(bytes: Uint8Array, forms: readonly CanaryBytes[]): string[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return forms.filter((f) => buf.includes(f.bytes)).map((f) => f.name);
}
