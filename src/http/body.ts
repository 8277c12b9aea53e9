import { FlowError } from '../errors.js';

/** The default request body limit of the REST launcher (spec/engine.md, "Limits"): 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(maxBytes: number): FlowError {
  return new FlowError('body_too_large', `[flowctl] [launcher] request body is larger than ${maxBytes} bytes`, {
    data: { max_bytes: maxBytes },
  });
}

/**
 * Read a request body as UTF-8 text, refusing more than `maxBytes`. Content-Length is checked first
 * so an honest oversized request is refused without reading it; the streamed bytes are counted too,
 * because chunked requests carry no length and a client may lie about it.
 */
export async function readBodyText(request: Request, maxBytes: number = DEFAULT_MAX_BODY_BYTES): Promise<string> {
  const declared = request.headers.get('content-length');
  const length = declared !== null && /^\d+$/.test(declared.trim()) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBytes) throw tooLarge(maxBytes);
  if (length !== undefined) {
    // With a declared length the HTTP parser delivers exactly that many bytes, so the whole body
    // can be read at once (node-server reads it straight from the socket, no web stream); the
    // count below still guards hosts that do not enforce it.
    const bytes = new Uint8Array(await request.arrayBuffer().catch(incomplete));
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    return decodeUtf8(bytes);
  }
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Bounded: every iteration consumes bytes, and more than maxBytes ends the loop.
  for (;;) {
    const { done, value } = await reader.read().catch(incomplete);
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

/** The body stream failed: the client closed, or the server closed a request whose body stalled. */
function incomplete(cause: unknown): never {
  if (cause instanceof FlowError) throw cause;
  throw new FlowError('body_incomplete', '[flowctl] [launcher] request body was not received in full', { cause });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (cause) {
    throw new FlowError('invalid_json', '[flowctl] [launcher] request body is not valid UTF-8', { cause });
  }
}

/**
 * Read and parse a JSON body. An empty body is `undefined` (routes decide what that means, e.g. a run
 * with no inputs); malformed JSON is FlowError `invalid_json` with the parser's message.
 */
export async function readJsonBody(request: Request, maxBytes: number = DEFAULT_MAX_BODY_BYTES): Promise<unknown> {
  const text = await readBodyText(request, maxBytes);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new FlowError('invalid_json', `[flowctl] [launcher] request body is not valid JSON: ${(cause as Error).message}`, {
      cause,
    });
  }
}

const JSON_MEDIA_TYPE = /^application\/json[ \t]*(?:;(.*))?$/i;

function unsupportedMediaType(message: string): FlowError {
  return new FlowError('unsupported_media_type', `[flowctl] [launcher] ${message}`);
}

/**
 * The checks on a request's framing before its body is read (docs/rest.md, "Statuses and error
 * codes"): a body must be `application/json` (UTF-8; the only charset parameter accepted is utf-8),
 * and carry no content or transfer coding the launcher does not decode (`Content-Encoding` other
 * than `identity`, `Transfer-Encoding` other than `chunked`). A request without a body needs no type,
 * but one that names a type must name JSON: an empty `text/plain` form post is refused too.
 * Throws FlowError `unsupported_encoding` or `unsupported_media_type` (both 415).
 */
export function assertJsonBodyHeaders(request: Request): void {
  const headers = request.headers;
  const transfer = headers.get('transfer-encoding');
  if (transfer !== null && transfer.trim().toLowerCase() !== 'chunked') {
    throw new FlowError(
      'unsupported_encoding',
      `[flowctl] [launcher] Transfer-Encoding ${JSON.stringify(transfer.slice(0, 60))} is not supported; send the body plain or chunked`,
    );
  }
  const coding = headers.get('content-encoding');
  if (coding?.split(',').some((c) => c.trim().toLowerCase() !== 'identity')) {
    throw new FlowError(
      'unsupported_encoding',
      `[flowctl] [launcher] Content-Encoding ${JSON.stringify(coding.slice(0, 60))} is not supported; send the body uncompressed`,
    );
  }
  const type = headers.get('content-type');
  if (type === null) {
    const declared = headers.get('content-length');
    const hasBody = transfer !== null || (declared !== null && declared.trim() !== '0');
    if (hasBody) throw unsupportedMediaType('a request body needs Content-Type: application/json');
    return;
  }
  const m = JSON_MEDIA_TYPE.exec(type.trim());
  if (!m) throw unsupportedMediaType(`Content-Type ${JSON.stringify(type.slice(0, 60))} is not supported; send application/json`);
  for (const param of (m[1] ?? '').split(';')) {
    const [name, value] = param.split('=').map((x) => x.trim());
    if (name?.toLowerCase() === 'charset' && value?.replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') {
      throw unsupportedMediaType(`the charset of a JSON body must be utf-8, got ${JSON.stringify(String(value).slice(0, 40))}`);
    }
  }
}

/**
 * Whether JSON `text` nests arrays and objects deeper than `max` levels (brackets inside strings do
 * not count). One pass, no parse: a server refuses such a body before it reaches code that recurses
 * over values (serializers, validators, the secret mask), which a deep enough value overflows.
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
