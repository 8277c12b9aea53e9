/**
 * The forms a secret value can take on its way out of a run, as one regular expression per value.
 *
 * A secret rarely leaves as its exact text: `http/request` percent-encodes it into a URL, a server
 * echoes it back form-encoded in a redirect, HTML-escaped in a page, base64 in a Basic credential,
 * JSON-escaped inside a text body. The pattern of a value matches, for each of its characters, any
 * of the ways that character is written by those encoders, in any mix:
 *
 * - itself;
 * - percent-encoded UTF-8 bytes, upper or lower case hex, also encoded twice (`%252B`): covers
 *   `encodeURIComponent`, `encodeURI`, every WHATWG URL percent-encode set (path, query, userinfo,
 *   fragment) and form encoding, whose `+` for a space is also accepted; `escape()`'s `%XX` and
 *   `%uXXXX`;
 * - JSON string escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9`, surrogate pairs), also escaped again;
 * - HTML character references: named (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;` `&nbsp;`), decimal
 *   and hex (`&#39;` `&#x27;`);
 * - UTF-8 bytes read as Latin-1 (a server that decodes with the wrong charset).
 *
 * What an HTTP header or the URL parser drops is optional: tabs and newlines anywhere (the URL
 * parser removes them), spaces and control characters at the ends (trimmed from header values and
 * URLs). Unicode NFC/NFD/NFKC variants of the value are masked as values of their own.
 *
 * Re-encoded values (upper-cased, lower-cased, hex) are matched only for values of at least
 * `REENCODED_MIN_LENGTH` characters (after trimming): each letter in either case, in any mix (so
 * `toUpperCase()`, `toLowerCase()`, title case, and those forms percent- or HTML-encoded), plus the
 * whole-string upper and lower case (`ß` -> `SS`, a final sigma); and the hex
 * of the UTF-8 bytes, digits in either case, bytes optionally prefixed by `\x` or `0x` or separated
 * by `:`, `-` or a space. A shorter value (a PIN, `on`, `abc`) would mask ordinary words and numbers
 * in every case, so it keeps the exact forms only.
 *
 * Base64 and base64url cannot be matched per character: a value inside longer base64 text (the
 * `user:secret` of a Basic credential) is encoded differently at each of the three byte offsets. For
 * each offset the characters that depend on the value's bytes alone are matched (the one or two
 * characters at each end that mix with neighbouring bytes are left); the value's complete encodings
 * (with and without padding) are matched too.
 */

const HEX = '0123456789abcdef';

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `2B` -> `2[bB]`: hex digits in either case. */
function hexPattern(hex: string): string {
  let out = '';
  for (const d of hex.toLowerCase()) out += /[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d;
  return out;
}

function hex(n: number, width: number): string {
  let s = '';
  for (let i = width - 1; i >= 0; i--) s += HEX[(n >> (i * 4)) & 15];
  return s;
}

const JSON_SHORT: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };
const HTML_NAMED: Record<string, string[]> = {
  '&': ['amp'],
  '<': ['lt'],
  '>': ['gt'],
  '"': ['quot'],
  "'": ['apos'],
  '\u00a0': ['nbsp'],
};

/** The backslash of a JSON escape: one, or more when the JSON text was escaped again (`\\\"`, `\\\\u00e9`). */
const BACKSLASHES = '\\\\+';

/** Every way one code point may be written, as a regex alternation (no capturing groups). */
function charAlternatives(ch: string): string[] {
  const cp = ch.codePointAt(0)!;
  const alts = new Set<string>([escapeRegex(ch)]);
  const bytes = Buffer.from(ch, 'utf8');
  // Percent-encoded UTF-8, also twice (%25 is the encoded %).
  alts.add([...bytes].map((b) => `%(?:25)?${hexPattern(hex(b, 2))}`).join(''));
  // escape(): Latin-1 as one %XX byte, beyond as %uXXXX.
  if (cp >= 0x80 && cp <= 0xff) alts.add(`%(?:25)?${hexPattern(hex(cp, 2))}`);
  if (cp > 0xff && cp <= 0xffff) alts.add(`%(?:25)?[uU]${hexPattern(hex(cp, 4))}`);
  // Form encoding writes a space as +.
  if (ch === ' ') alts.add('\\+').add('%(?:25)?2[bB]');
  // JSON escapes.
  if (JSON_SHORT[ch] !== undefined) alts.add(`${BACKSLASHES}${escapeRegex(JSON_SHORT[ch]!)}`);
  if (cp <= 0xffff) alts.add(`${BACKSLASHES}u${hexPattern(hex(cp, 4))}`);
  else {
    const hi = 0xd800 + ((cp - 0x10000) >> 10);
    const lo = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    alts.add(`${BACKSLASHES}u${hexPattern(hex(hi, 4))}${BACKSLASHES}u${hexPattern(hex(lo, 4))}`);
  }
  // HTML character references.
  for (const name of HTML_NAMED[ch] ?? []) alts.add(`&${name};`);
  alts.add(`&#0*${cp};`);
  alts.add(`&#[xX]0*${hexPattern(cp.toString(16))};`);
  // UTF-8 read as Latin-1.
  if (cp >= 0x80) alts.add(escapeRegex(String.fromCharCode(...bytes)));
  return [...alts];
}

/**
 * Below this many characters (code points, ends trimmed) the case-insensitive and hex forms are not
 * matched. docs/journal.md ("Secrets") gives the reason: 8 characters case-folded from letters and
 * digits alone are 36^8 (about 2.8e12) values, and their hex is 16 digits, so neither turns up in a
 * page by chance, while a shorter value would mask ordinary text.
 */
export const REENCODED_MIN_LENGTH = 8;

/** The single code points `ch` may be written as in another case (itself first). */
function caseVariants(ch: string): string[] {
  const out = new Set([ch]);
  for (const v of [ch.toUpperCase(), ch.toLowerCase()]) if ([...v].length === 1) out.add(v);
  return [...out];
}

/** Characters an HTTP header or the URL parser may drop from the ends of a value (C0 controls and space). */
const TRIMMABLE = /^[\u0000-\u0020]$/;

/** The per-character pattern of `value` (see the module comment). */
function characterPattern(value: string, caseless: boolean): string {
  const chars = [...value];
  let first = 0;
  while (first < chars.length && TRIMMABLE.test(chars[first]!)) first++;
  let last = chars.length - 1;
  while (last >= first && TRIMMABLE.test(chars[last]!)) last--;
  // A value made only of trimmable characters keeps them all: an empty match would mask everywhere.
  const trimmable = first <= last;
  return chars
    .map((ch, i) => {
      const alts = [...new Set((caseless ? caseVariants(ch) : [ch]).flatMap(charAlternatives))].join('|');
      const optional = (trimmable && (i < first || i > last)) || ch === '\t' || ch === '\n' || ch === '\r';
      return `(?:${alts})${optional ? '?' : ''}`;
    })
    .join('');
}

/** Below this many characters a base64 fragment could turn up by chance: it is not matched. */
const MIN_BASE64_CORE = 6;

/** The base64 and base64url text that stands for `value` wherever it sits in longer base64 text. */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set<string>();
  for (const encoding of ['base64', 'base64url'] as const) {
    const whole = bytes.toString(encoding);
    if (whole.length >= 4) {
      forms.add(whole);
      forms.add(whole.replace(/=+$/, ''));
    }
    for (let offset = 0; offset < 3; offset++) {
      const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString(encoding);
      // Character i covers bits [6i, 6i + 6): it depends on the value alone from bit 8*offset to 8*(offset + n).
      const from = Math.ceil((8 * offset) / 6);
      const to = Math.floor((8 * (offset + bytes.length)) / 6);
      if (to - from >= MIN_BASE64_CORE) forms.add(text.slice(from, to));
    }
  }
  return [...forms];
}

/** The hex of the UTF-8 bytes of `value`, digits in either case, bytes prefixed or separated as a dump writes them. */
function hexForm(value: string): string {
  const bytes = [...Buffer.from(value, 'utf8')].map((b) => `(?:\\\\x|0[xX])?${hexPattern(hex(b, 2))}`);
  return bytes.join('[:\\- ]?');
}

/** Whether `value` is long enough for its case-insensitive and hex forms (see REENCODED_MIN_LENGTH). */
export function reencodedForms(value: string): boolean {
  return [...value.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')].length >= REENCODED_MIN_LENGTH;
}

/** The regex source that matches `value` in every form above. */
export function secretPattern(value: string): string {
  const caseless = reencodedForms(value);
  const variants = new Set([value, value.normalize('NFC'), value.normalize('NFD'), value.normalize('NFKC')]);
  if (caseless) {
    // Whole-string mappings that per-character variants miss: a change of length (ß -> SS, ﬁ -> FI)
    // or of context (a final sigma).
    for (const v of [...variants]) variants.add(v.toUpperCase()).add(v.toLowerCase());
  }
  const parts: string[] = [];
  const base64 = new Set<string>();
  const hexes = new Set<string>();
  for (const v of variants) {
    if (v.length === 0) continue;
    parts.push(characterPattern(v, caseless));
    // What a header or URL kept of the value (its ends trimmed, tabs and newlines dropped) is what a
    // server base64-encodes when it echoes it.
    for (const kept of [v, v.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, ''), v.replace(/[\t\n\r]/g, '')]) {
      if (kept.length > 0) for (const form of base64Forms(kept)) base64.add(form);
      if (caseless && reencodedForms(kept)) hexes.add(hexForm(kept));
    }
  }
  for (const form of base64) parts.push(escapeRegex(form));
  parts.push(...hexes);
  return parts.join('|');
}
