import { describe, expect, it } from 'vitest';
import { digestBytes, digestOf } from '../../../src/canonical.js';
import { FlowError } from '../../../src/errors.js';
import { checkOps, parseOps } from '../../../src/record/ops.js';
import { buildRecording, checkInsideFolder, type RecordOptions } from '../../../src/record/recording.js';
import { parseRecording } from '../../../src/record/recording-schema.js';

const CANARY = 'pw-canary-7f3e9b';
const files: Record<string, string> = { 'files/a.csv': 'x,y\n1,2\n', 'b.txt': 'bee' };
const readFile = async (rel: string) => {
  const text = files[rel];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return new TextEncoder().encode(text);
};

const OPS = [
  { kind: 'navigate', url: 'http://127.0.0.1:1/index.html' },
  { kind: 'fill', target: '#user', value: 'alice', slot: 'user' },
  { kind: 'fill', target: { css: '#pw', fallbacks: [{ label: 'Password' }] }, value: CANARY, slot: 'password' },
  { kind: 'click', target: { role: 'button', name: 'Sign in' } },
  { kind: 'select', target: '#cat', value: ['a', 'b'], slot: 'cats' },
  { kind: 'drag', source: { text: 'Card' }, target: { testid: 'done', fallbacks: [] } },
  { kind: 'upload', target: '#file', files: ['files/a.csv', 'b.txt'], slot: 'docs' },
  { kind: 'extract', target: 'td.name', name: 'names', all: true },
  { kind: 'extract', target: { xpath: '//h1' }, name: 'title', attribute: 'title', all: false },
];

function options(over: Partial<RecordOptions> = {}): RecordOptions {
  return { name: 'shop', task: 'Buy things', ops: OPS, inputs: ['user', 'cats', 'docs'], secrets: ['password'], readFile, ...over };
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; data: unknown }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FlowError);
    const e = err as FlowError;
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error('expected a FlowError');
}

describe('ops schema', () => {
  it('accepts every op kind and both target forms', () => {
    expect(parseOps(OPS)).toHaveLength(OPS.length);
  });

  it.each([
    [[{ kind: 'scroll', target: '#x' }], 'ops[0].kind', /unknown kind "scroll"/],
    [[{ target: '#x' }], 'ops[0].kind', /is required/],
    [[{ kind: 'click' }], 'ops[0].target', /is required/],
    [[{ kind: 'drag', source: '#a' }], 'ops[0].target', /is required/],
    [[{ kind: 'click', target: { name: 'x' } }], 'ops[0].target', /needs one of/],
    [[{ kind: 'click', target: '#a', extra: 1 }], 'ops[0]', /unknown field extra/],
    [[{ kind: 'navigate', url: 'ftp://x' }], 'ops[0].url', /http\(s\) URL/],
    [[{ kind: 'fill', target: '#a', value: 42 }], 'ops[0].value', /quote numbers/],
    [[{ kind: 'extract', target: '#a', name: '1bad' }], 'ops[0].name', /identifier/],
    [[{ kind: 'upload', target: '#a' }], 'ops[0].files', /is required/],
    [{ kind: 'click' }, 'ops', /must be a list/],
    [[], 'ops', /at least one/],
  ])('rejects %j at %s', (ops, path, message) => {
    const { issues } = checkOps(ops);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });

  it('never echoes op values in issues', () => {
    const { issues } = checkOps([{ kind: 'fill', target: 7, value: CANARY }]);
    expect(JSON.stringify(issues)).not.toContain(CANARY);
  });
});

describe('buildRecording', () => {
  it('normalizes ops, drops secret values, digests files and content-addresses the recording', async () => {
    const { recording, files: stored } = await buildRecording(options());
    expect(JSON.stringify(recording)).not.toContain(CANARY);
    expect(recording.format).toBe('flowctl-recording/2');
    expect(recording.ops[1]).toEqual({ kind: 'fill', target: { css: '#user' }, value: 'alice', slot: 'user' });
    expect(recording.ops[2]).toEqual({ kind: 'fill', target: { css: '#pw', fallbacks: [{ label: 'Password' }] }, slot: 'password' });
    expect(recording.ops[5]).toEqual({ kind: 'drag', source: { text: 'Card' }, target: { testid: 'done' } });
    expect(recording.ops[8]).toEqual({ kind: 'extract', target: { xpath: '//h1' }, name: 'title', attribute: 'title' });
    expect(recording.inputs).toEqual({
      user: { type: 'string', secret: false, default: 'alice' },
      password: { type: 'string', secret: true },
      cats: { type: 'array', secret: false, default: ['a', 'b'] },
      docs: { type: 'array', secret: false },
    });
    const csv = digestBytes(files['files/a.csv']!);
    expect(recording.ops[6]).toMatchObject({
      files: [
        { name: 'a.csv', digest: csv },
        { name: 'b.txt', digest: digestBytes('bee') },
      ],
    });
    expect(stored.get(csv)?.name).toBe('a.csv');
    const { source_digest, ...body } = recording;
    expect(source_digest).toBe(digestOf(body));
  });

  it('gives the same digest for the same content and a different one for any change', async () => {
    const a = (await buildRecording(options())).recording.source_digest;
    const reordered = OPS.map((op) => Object.fromEntries(Object.entries(op).reverse()));
    expect((await buildRecording(options({ ops: reordered }))).recording.source_digest).toBe(a);
    expect((await buildRecording(options({ task: 'Buy other things' }))).recording.source_digest).not.toBe(a);
    // The secret value never reaches the digest: another password, the same recording.
    const otherPw = OPS.map((op, i) => (i === 2 ? { ...op, value: 'something-else' } : op));
    expect((await buildRecording(options({ ops: otherPw }))).recording.source_digest).toBe(a);
  });

  it.each([
    ['a slot named by both --input and --secret', { inputs: ['user', 'password'] }, 'slot_conflict'],
    ['a --secret slot no op uses', { secrets: ['password', 'pin'] }, 'unknown_slot'],
    ['an --input slot no op uses', { inputs: ['user', 'nothing'] }, 'unknown_slot'],
    ['a bad name', { name: 'Shop Now' }, 'invalid_name'],
    ['an empty task', { task: ' ' }, 'invalid_task'],
    ['an unknown kind', { ops: [{ kind: 'scroll', target: '#a' }] }, 'invalid_ops'],
    ['a missing target', { ops: [{ kind: 'click' }] }, 'invalid_ops'],
    ['a file outside the folder', { ops: [{ kind: 'upload', target: '#f', files: '../secret.txt' }], inputs: [], secrets: [] }, 'upload_outside_folder'],
    ['an absolute file path', { ops: [{ kind: 'upload', target: '#f', files: '/etc/passwd' }], inputs: [], secrets: [] }, 'upload_outside_folder'],
    ['a missing file', { ops: [{ kind: 'upload', target: '#f', files: 'nope.txt' }], inputs: [], secrets: [] }, 'upload_file_missing'],
    ['a secret upload slot', { ops: [{ kind: 'upload', target: '#f', files: 'b.txt', slot: 's' }], inputs: [], secrets: ['s'] }, 'invalid_slot'],
    ['a value-less fill without a slot', { ops: [{ kind: 'fill', target: '#f' }], inputs: [], secrets: [] }, 'invalid_ops'],
    [
      'a slot used as string and list',
      {
        ops: [
          { kind: 'fill', target: '#a', value: 'x', slot: 's' },
          { kind: 'select', target: '#b', value: ['y'], slot: 's' },
        ],
        inputs: ['s'],
        secrets: [],
      },
      'slot_type_conflict',
    ],
    [
      'a duplicate extract name',
      {
        ops: [
          { kind: 'extract', target: '#a', name: 'n' },
          { kind: 'extract', target: '#b', name: 'n' },
        ],
        inputs: [],
        secrets: [],
      },
      'duplicate_output',
    ],
  ])('rejects %s', async (_what, over, code) => {
    const err = await codeOf(buildRecording(options(over as Partial<RecordOptions>)));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(/^\[flowctl\] \[record\] /);
    expect(err.message).not.toContain(CANARY);
  });

  it('keeps slots named by no flag as literal values', async () => {
    const { recording } = await buildRecording(options({ inputs: [], secrets: [], ops: [{ kind: 'fill', target: '#a', value: 'v', slot: 'free' }] }));
    expect(recording.inputs).toEqual({});
    expect(recording.ops[0]).toEqual({ kind: 'fill', target: { css: '#a' }, value: 'v', slot: 'free' });
  });

  it('checks paths lexically before reading anything', () => {
    expect(checkInsideFolder('files/../files/a.csv', 'x')).toBe('files/a.csv');
    expect(() => checkInsideFolder('files/../../a', 'x')).toThrow(/outside the ops file's folder/);
    expect(() => checkInsideFolder('C:\\a.txt', 'x')).toThrow(/outside/);
    expect(() => checkInsideFolder('.', 'x')).toThrow(/outside/);
  });
});

describe('parseRecording', () => {
  it('round-trips a built recording', async () => {
    const { recording } = await buildRecording(options());
    expect(parseRecording(JSON.parse(JSON.stringify(recording)))).toEqual(recording);
  });

  it('refuses an edited recording (digest) and a secret value smuggled in', async () => {
    const { recording } = await buildRecording(options());
    const edited = structuredClone(recording);
    (edited.ops[0] as { url: string }).url = 'http://127.0.0.1:2/';
    expect(() => parseRecording(edited)).toThrow(expect.objectContaining({ code: 'recording_digest_mismatch' }));

    const smuggled = structuredClone(recording) as typeof recording;
    (smuggled.ops[2] as { value?: string }).value = 'leak';
    const { source_digest: _, ...body } = smuggled;
    expect(() => parseRecording({ ...body, source_digest: digestOf(body) })).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
  });

  it('names the bad field of a malformed recording', () => {
    try {
      parseRecording({ format: 'flowctl-recording/1', name: 'x', task: 't', ops: [{ kind: 'click' }], inputs: {}, source_digest: 'sha256:00' });
      throw new Error('accepted');
    } catch (err) {
      expect((err as FlowError).code).toBe('invalid_recording');
      const paths = ((err as FlowError).data as { issues: { path: string }[] }).issues.map((i) => i.path);
      expect(paths).toEqual(expect.arrayContaining(['ops[0].target', 'source_digest']));
    }
  });
});

describe('locator objects with several strategies', () => {
  it('split into a primary and fallbacks in a fixed order, before the explicit fallbacks', async () => {
    const { normalizeTarget } = await import('../../../src/record/locator.js');
    expect(
      normalizeTarget({ testid: ' login ', role: 'button', name: 'Log in', css: '#login', fallbacks: [{ text: 'Sign in', xpath: '//button[1]' }] }),
    ).toEqual({
      css: '#login',
      fallbacks: [{ testid: 'login' }, { role: 'button', name: 'Log in' }, { text: 'Sign in' }, { xpath: '//button[1]' }],
    });
    expect(normalizeTarget({ label: 'User' })).toEqual({ label: 'User' });
    expect(normalizeTarget('  #q ')).toEqual({ css: '#q' });
  });

  it('are accepted in ops files', () => {
    expect(checkOps([{ kind: 'click', target: { css: '#a', testid: 'b', fallbacks: [{ role: 'link', name: 'A', text: 'A' }] } }]).issues).toEqual([]);
  });
});

describe('format 2: keys, hover, click count and button, check/uncheck, wait', () => {
  const V2 = [
    { kind: 'press', key: 'Enter', target: '#q' },
    { kind: 'press', key: 'Control+Shift+ArrowLeft' },
    { kind: 'press', key: 'Shift++' },
    { kind: 'hover', target: { role: 'button', name: 'Menu' } },
    { kind: 'click', target: '#a', count: 2 },
    { kind: 'click', target: '#a', count: 1, button: 'left' },
    { kind: 'click', target: '#a', button: 'right' },
    { kind: 'check', target: { label: 'I agree' } },
    { kind: 'uncheck', target: '#news' },
    { kind: 'wait', target: '#r', text: 'ready', timeout_ms: 5000 },
    { kind: 'wait', target: '.spinner', state: 'hidden' },
    { kind: 'wait', target: '#x', state: 'visible' },
  ];

  it('records them, leaving the defaults out', async () => {
    const { recording } = await buildRecording(options({ ops: V2, inputs: [], secrets: [] }));
    expect(recording.format).toBe('flowctl-recording/2');
    expect(recording.ops).toEqual([
      { kind: 'press', key: 'Enter', target: { css: '#q' } },
      { kind: 'press', key: 'Control+Shift+ArrowLeft' },
      { kind: 'press', key: 'Shift++' },
      { kind: 'hover', target: { role: 'button', name: 'Menu' } },
      { kind: 'click', target: { css: '#a' }, count: 2 },
      { kind: 'click', target: { css: '#a' } },
      { kind: 'click', target: { css: '#a' }, button: 'right' },
      { kind: 'check', target: { label: 'I agree' } },
      { kind: 'uncheck', target: { css: '#news' } },
      { kind: 'wait', target: { css: '#r' }, text: 'ready', timeout_ms: 5000 },
      { kind: 'wait', target: { css: '.spinner' }, state: 'hidden' },
      { kind: 'wait', target: { css: '#x' } },
    ]);
    // A click with its defaults written out is the same Recording as one without them.
    const plain = await buildRecording(options({ ops: [{ kind: 'click', target: '#a' }], inputs: [], secrets: [] }));
    const explicit = await buildRecording(options({ ops: [{ kind: 'click', target: '#a', count: 1, button: 'left' }], inputs: [], secrets: [] }));
    expect(explicit.recording.source_digest).toBe(plain.recording.source_digest);
    expect(parseRecording(JSON.parse(JSON.stringify(recording)))).toEqual(recording);
  });

  it.each([
    [[{ kind: 'press', key: 'enter' }], 'ops[0].key', /is not a key name/],
    [[{ kind: 'press', key: 'Control+Foo' }], 'ops[0].key', /unknown key name at part 2 of 2/],
    [[{ kind: 'press', key: '' }], 'ops[0].key', /must not be empty/],
    [[{ kind: 'press' }], 'ops[0].key', /is required/],
    [[{ kind: 'press', key: 'Enter', target: 7 }], 'ops[0].target', /CSS selector string or a locator object/],
    [[{ kind: 'click', target: '#a', count: 0 }], 'ops[0].count', /1, 2 \(a double-click\) or 3/],
    [[{ kind: 'click', target: '#a', count: 1.5 }], 'ops[0].count', /1, 2 \(a double-click\) or 3/],
    [[{ kind: 'click', target: '#a', button: 'back' }], 'ops[0].button', /one of left, right, middle/],
    [[{ kind: 'hover', target: '#a', key: 'Enter' }], 'ops[0]', /unknown field key for a hover op/],
    [[{ kind: 'check' }], 'ops[0].target', /is required/],
    [[{ kind: 'wait', target: '#a', state: 'gone' }], 'ops[0].state', /one of visible, hidden/],
    [[{ kind: 'wait', target: '#a', text: '' }], 'ops[0].text', /must not be empty/],
    [[{ kind: 'wait', target: '#a', timeout_ms: 600_001 }], 'ops[0].timeout_ms', /from 1 to 600000/],
  ])('rejects %j at %s', (ops, path, message) => {
    const { issues } = checkOps(ops);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });

  it('never echoes a bad key', () => {
    const { issues } = checkOps([{ kind: 'press', key: CANARY }]);
    expect(JSON.stringify(issues)).not.toContain(CANARY);
  });

  it('keeps format 1 to the seven first kinds and their fields, and names an unknown format', async () => {
    const { recording } = await buildRecording(options({ ops: [{ kind: 'hover', target: '#a' }], inputs: [], secrets: [] }));
    const asV1 = (r: object) => {
      const { source_digest: _, ...body } = { ...r, format: 'flowctl-recording/1' } as Record<string, unknown>;
      return { ...body, source_digest: digestOf(body) };
    };
    expect(() => parseRecording(asV1(recording))).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
    const dbl = await buildRecording(options({ ops: [{ kind: 'click', target: '#a', count: 2 }], inputs: [], secrets: [] }));
    expect(() => parseRecording(asV1(dbl.recording))).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
    // The same click without count is a valid format-1 Recording.
    const single = await buildRecording(options({ ops: [{ kind: 'click', target: '#a' }], inputs: [], secrets: [] }));
    expect(parseRecording(asV1(single.recording)).format).toBe('flowctl-recording/1');
    try {
      parseRecording({ ...recording, format: 'flowctl-recording/9' });
      throw new Error('accepted');
    } catch (err) {
      expect((err as FlowError).code).toBe('invalid_recording');
      expect((err as FlowError).message).toContain('format is "flowctl-recording/9" (known: flowctl-recording/1, flowctl-recording/2');
    }
  });

  it('refuses a stored press with a key Playwright does not have, and a stored default', async () => {
    const { recording } = await buildRecording(
      options({
        ops: [
          { kind: 'press', key: 'Enter' },
          { kind: 'click', target: '#a' },
        ],
        inputs: [],
        secrets: [],
      }),
    );
    const tamper = (edit: (ops: Record<string, unknown>[]) => void) => {
      const body = structuredClone({ ...recording, source_digest: undefined }) as Record<string, unknown>;
      delete body.source_digest;
      edit(body.ops as Record<string, unknown>[]);
      return { ...body, source_digest: digestOf(body) };
    };
    expect(() => parseRecording(tamper((ops) => (ops[0]!.key = 'Return')))).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
    expect(() => parseRecording(tamper((ops) => (ops[1]!.count = 1)))).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
  });
});

describe('frame on targeted ops', () => {
  it('records a frame as a list of normalized locators, outermost first, and keeps it out of format 1', async () => {
    const { recording } = await buildRecording(
      options({
        ops: [
          { kind: 'click', target: '#save', frame: '#profile' },
          { kind: 'fill', target: '#n', value: 'x', frame: ['#outer', { title: undefined, css: 'iframe.inner', fallbacks: [] }] },
          { kind: 'drag', source: '#a', target: '#b', frame: { testid: 'board', css: '#board' } },
          { kind: 'press', key: 'Enter', target: '#q', frame: ['#f'] },
          { kind: 'wait', target: '#r', frame: '#f' },
        ].map((op) => JSON.parse(JSON.stringify(op))),
        inputs: [],
        secrets: [],
      }),
    );
    expect(recording.ops.map((op) => ('frame' in op ? op.frame : undefined))).toEqual([
      [{ css: '#profile' }],
      [{ css: '#outer' }, { css: 'iframe.inner' }],
      [{ css: '#board', fallbacks: [{ testid: 'board' }] }],
      [{ css: '#f' }],
      [{ css: '#f' }],
    ]);
    expect(parseRecording(JSON.parse(JSON.stringify(recording)))).toEqual(recording);
    // One frame or a list of one: the same Recording.
    const one = await buildRecording(options({ ops: [{ kind: 'click', target: '#save', frame: '#profile' }], inputs: [], secrets: [] }));
    const list = await buildRecording(options({ ops: [{ kind: 'click', target: '#save', frame: ['#profile'] }], inputs: [], secrets: [] }));
    expect(list.recording.source_digest).toBe(one.recording.source_digest);
    const { source_digest: _, ...body } = { ...one.recording, format: 'flowctl-recording/1' } as Record<string, unknown>;
    expect(() => parseRecording({ ...body, source_digest: digestOf(body) })).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
  });

  it.each([
    [[{ kind: 'click', target: '#a', frame: [] }], 'ops[0].frame', /must name at least one frame/],
    [[{ kind: 'click', target: '#a', frame: 7 }], 'ops[0].frame', /a target naming an iframe, or a list of them/],
    [[{ kind: 'click', target: '#a', frame: [{ name: 'x' }] }], 'ops[0].frame[0]', /needs one of css/],
    [[{ kind: 'press', key: 'Enter', frame: '#f' }], 'ops[0].frame', /needs a target/],
    [[{ kind: 'navigate', url: 'http://127.0.0.1:1/', frame: '#f' }], 'ops[0]', /unknown field frame/],
  ])('rejects %j at %s', (ops, path, message) => {
    const { issues } = checkOps(ops);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });

  it('keeps unknown fields out of the format-2 ops that extend format 1', async () => {
    const { recording } = await buildRecording(options({ ops: [{ kind: 'fill', target: '#a', value: 'x', frame: '#f' }], inputs: [], secrets: [] }));
    const body = structuredClone({ ...recording }) as Record<string, unknown>;
    delete body.source_digest;
    (body.ops as Record<string, unknown>[])[0]!.extra = 1;
    expect(() => parseRecording({ ...body, source_digest: digestOf(body) })).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
  });
});

describe('new pages: opens_page and switch', () => {
  it('stores opens_page only when true and checks switch against the pages opened before it', async () => {
    const ops = [
      { kind: 'navigate', url: 'http://127.0.0.1:1/' },
      { kind: 'click', target: '#tab', opens_page: true },
      { kind: 'press', key: 'Enter', target: '#link', opens_page: true },
      { kind: 'check', target: '#c', opens_page: false },
      { kind: 'switch', page: 2 },
      { kind: 'switch', page: 0 },
    ];
    const { recording } = await buildRecording(options({ ops, inputs: [], secrets: [] }));
    expect(recording.ops.slice(1)).toEqual([
      { kind: 'click', target: { css: '#tab' }, opens_page: true },
      { kind: 'press', key: 'Enter', target: { css: '#link' }, opens_page: true },
      { kind: 'check', target: { css: '#c' } },
      { kind: 'switch', page: 2 },
      { kind: 'switch', page: 0 },
    ]);
    expect(parseRecording(JSON.parse(JSON.stringify(recording)))).toEqual(recording);
    const early = await codeOf(buildRecording(options({ ops: [ops[4]!, ops[1]!], inputs: [], secrets: [] })));
    expect(early).toMatchObject({ code: 'invalid_ops', data: { path: 'ops[0].page' } });
    expect(early.message).toContain('ops[0].page 2 is not open there: only page 0 is');
  });

  it.each([
    [[{ kind: 'switch' }], 'ops[0].page', /is required|index of an open page/],
    [[{ kind: 'switch', page: -1 }], 'ops[0].page', /index of an open page/],
    [[{ kind: 'switch', page: 1.5 }], 'ops[0].page', /index of an open page/],
    [[{ kind: 'switch', page: 0, target: '#a' }], 'ops[0]', /unknown field target for a switch op/],
    [[{ kind: 'extract', target: '#a', name: 'a', opens_page: true }], 'ops[0]', /unknown field opens_page for a extract op/],
    [[{ kind: 'wait', target: '#a', opens_page: true }], 'ops[0]', /unknown field opens_page/],
    [[{ kind: 'click', target: '#a', opens_page: 'yes' }], 'ops[0].opens_page', /true or false/],
  ])('rejects %j at %s', (ops, path, message) => {
    const { issues } = checkOps(ops);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });
});

describe('extract text as rendered', () => {
  it('stores text: rendered, leaves the default out, and keeps it out of format 1', async () => {
    const { recording } = await buildRecording(
      options({
        ops: [
          { kind: 'extract', target: 'pre', name: 'a', text: 'rendered' },
          { kind: 'extract', target: 'pre', name: 'b', text: 'content' },
        ],
        inputs: [],
        secrets: [],
      }),
    );
    expect(recording.ops).toEqual([
      { kind: 'extract', target: { css: 'pre' }, name: 'a', text: 'rendered' },
      { kind: 'extract', target: { css: 'pre' }, name: 'b' },
    ]);
    expect(parseRecording(JSON.parse(JSON.stringify(recording)))).toEqual(recording);
    const { source_digest: _, ...body } = { ...recording, format: 'flowctl-recording/1' } as Record<string, unknown>;
    expect(() => parseRecording({ ...body, source_digest: digestOf(body) })).toThrow(expect.objectContaining({ code: 'invalid_recording' }));
  });

  it.each([
    [[{ kind: 'extract', target: '#a', name: 'a', text: 'inner' }], 'ops[0].text', /one of content, rendered/],
    [[{ kind: 'extract', target: '#a', name: 'a', text: 'rendered', attribute: 'href' }], 'ops[0].text', /goes without attribute/],
  ])('rejects %j at %s', (ops, path, message) => {
    const { issues } = checkOps(ops);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });
});
