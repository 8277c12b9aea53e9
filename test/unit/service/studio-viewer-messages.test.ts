import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { StudioBrowser, StudioInput, StudioPage } from '../../../src/ports/studio.js';
import type { ServiceDeps } from '../../../src/service/context.js';
import type { CaptureAppender } from '../../../src/service/studio/capture-append.js';
import type { StudioServerMessage } from '../../../src/service/studio/protocol.js';
import type { StudioSession } from '../../../src/service/studio/session.js';
import type { StudioUploads } from '../../../src/service/studio/uploads.js';
import { listenToViewer } from '../../../src/service/studio/viewer-messages.js';

/**
 * The studio's viewer messages (viewer-messages.ts): each is parsed with the protocol (protocol.ts);
 * a bad one is answered `invalid_message` with the field at fault in words, and the session goes on.
 */
function harness() {
  const ws = new EventEmitter();
  const sent: StudioServerMessage[] = [];
  const inputs: StudioInput[] = [];
  const uploads: string[] = [];
  const session = {
    ws: ws as unknown as WebSocket,
    deps: {} as ServiceDeps,
    send: (m: StudioServerMessage) => sent.push(m),
    touch: () => {},
  } as unknown as StudioSession;
  const page = { input: (i: StudioInput) => inputs.push(i) } as unknown as StudioPage;
  const files = {
    transferring: () => false,
    files: (list: unknown) => uploads.push(`files ${JSON.stringify(list)}`),
    fileData: (data: unknown) => uploads.push(`data ${JSON.stringify(data)}`),
  } as unknown as StudioUploads;
  listenToViewer(session, page, { browser: {} as StudioBrowser, capture: {} as CaptureAppender, uploads: files });
  const send = (m: unknown) => ws.emit('message', Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)), false);
  const answer = (m: unknown) => {
    sent.length = 0;
    send(m);
    return sent.map((s) => (s.type === 'error' ? `${s.error}: ${s.message}` : s.type));
  };
  return { answer, inputs, uploads };
}

describe('studio viewer messages', () => {
  it('answers malformed messages with the field at fault', () => {
    const { answer } = harness();
    expect(answer('[1]')).toEqual(['invalid_message: a message is a JSON object with a type']);
    expect(answer({ type: 'hover' })).toEqual(['invalid_message: unknown message type "hover"']);
    expect(answer({ type: 'mouse', action: 'hover', x: 1, y: 1 })).toEqual(['invalid_message: mouse.action must be down, up, move or wheel']);
    expect(answer({ type: 'mouse', action: 'down', x: '1', y: 1 })).toEqual(['invalid_message: mouse.x and mouse.y must be numbers']);
    expect(answer({ type: 'mouse', action: 'down', x: 1, y: 1, button: 'back' })).toEqual([
      'invalid_message: mouse.button must be left, middle, right or none',
    ]);
    expect(answer({ type: 'key', action: 'press', key: 'a' })).toEqual(['invalid_message: key.action must be down or up']);
    expect(answer({ type: 'key', action: 'down', key: 'x'.repeat(33) })).toEqual(['invalid_message: key.key must be a key name (KeyboardEvent.key)']);
    expect(answer({ type: 'text', text: 5 })).toEqual(['invalid_message: text.text must be a string of at most 10000 characters']);
    expect(answer({ type: 'navigate', url: 'ftp://x' })).toEqual(['invalid_message: navigate.url must be an absolute http(s) URL']);
    expect(answer({ type: 'navigate' })).toEqual(['invalid_message: navigate.url must be an absolute http(s) URL']);
    expect(answer({ type: 'extract', field: '1bad' })).toEqual([
      'invalid_message: extract.field must be an identifier (letters, digits, _; not starting with a digit)',
    ]);
    expect(answer({ type: 'extract', field: 'ok', all: 'yes' })).toEqual(['invalid_message: extract.all must be true or false']);
    expect(answer({ type: 'ping' })).toEqual(['pong']);
  });

  it('passes parsed input to the page (counts clamped, the left button by default)', () => {
    const { answer, inputs } = harness();
    expect(answer({ type: 'mouse', action: 'down', x: 3, y: 4, clickCount: 9 })).toEqual([]);
    expect(answer({ type: 'text', text: 'hi' })).toEqual([]);
    expect(inputs).toEqual([
      { type: 'mouse', action: 'down', x: 3, y: 4, button: 'left', clickCount: 3 },
      { type: 'text', text: 'hi' },
    ]);
  });

  it('hands uploads their messages as sent, malformed ones too (they check them in full)', () => {
    const { answer, uploads } = harness();
    answer({ type: 'files', files: 'nope' });
    answer({ type: 'file_data', data: 7 });
    expect(uploads).toEqual(['files "nope"', 'data 7']);
  });
});
