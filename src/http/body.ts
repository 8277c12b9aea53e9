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
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    return decodeUtf8(bytes);
  }
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Bounded: every iteration consumes bytes, and more than maxBytes ends the loop.
  for (;;) {
    const { done, value } = await reader.read();
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
