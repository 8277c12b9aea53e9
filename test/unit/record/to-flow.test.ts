import { describe, expect, it } from 'vitest';
import { digestBytes } from '../../../src/canonical.js';
import { parseTemplate } from '../../../src/flow/expr.js';
import { buildRecording } from '../../../src/record/recording.js';
import { recordingToFlow } from '../../../src/record/to-flow.js';

const readFile = async () => new TextEncoder().encode('a,b\n');

async function recording(ops: unknown[], inputs: string[] = [], secrets: string[] = []) {
  return (await buildRecording({ name: 'shop', task: 'Find ${things}', ops, inputs, secrets, readFile })).recording;
}

describe('recordingToFlow', () => {
  it('turns each op into a browser step and extract names into the output', async () => {
    const r = await recording(
      [
        { kind: 'navigate', url: 'http://127.0.0.1:9/' },
        { kind: 'fill', target: '#user', value: 'alice', slot: 'user' },
        { kind: 'fill', target: '#pw', value: 'hidden', slot: 'pw' },
        { kind: 'select', target: '#cat', value: 'Books' },
        { kind: 'drag', source: '#a', target: '#b' },
        { kind: 'upload', target: '#f', files: 'r.csv' },
        { kind: 'extract', target: 'td', name: 'rows', all: true },
        { kind: 'extract', target: '#n', name: 'n', attribute: 'href' },
      ],
      ['user'],
      ['pw'],
    );
    const flow = recordingToFlow(r);
    expect(flow.name).toBe('shop');
    expect(flow.inputs).toEqual({ user: { type: 'string', default: 'alice' }, pw: { type: 'string', secret: true } });
    expect(flow.steps.map((s) => `${s.id} ${s.tool}`)).toEqual([
      'navigate_1 browser/navigate@1.0',
      'fill_2 browser/fill@1.1',
      'fill_3 browser/fill@1.1',
      'select_4 browser/select@1.1',
      'drag_5 browser/drag@1.1',
      'upload_6 browser/upload@1.1',
      'extract_7 browser/extract@1.1',
      'extract_8 browser/extract@1.1',
    ]);
    expect(flow.steps[1]!.args).toEqual({ target: { css: '#user' }, value: '${inputs.user}' });
    expect(flow.steps[2]!.args).toEqual({ target: { css: '#pw' }, value: '${inputs.pw}', mask: true });
    expect(flow.steps[3]!.args).toEqual({ target: { css: '#cat' }, value: 'Books' });
    const hex = digestBytes('a,b\n').slice(7);
    expect(flow.steps[5]!.args).toEqual({ target: { css: '#f' }, files: [{ path: `recordings/shop.files/${hex}/r.csv`, digest: `sha256:${hex}` }] });
    expect(flow.steps[6]!.args).toEqual({ target: { css: 'td' }, all: true });
    expect(flow.steps[7]!.args).toEqual({ target: { css: '#n' }, attribute: 'href' });
    expect(flow.output).toEqual({ rows: '${steps.extract_7.output.value}', n: '${steps.extract_8.output.value}' });
  });

  it('escapes recorded text so it is never evaluated as an expression', async () => {
    const r = await recording([{ kind: 'fill', target: 'input[name="${x}"]', value: 'cost: ${price}' }]);
    const args = recordingToFlow(r).steps[0]!.args as { value: string; target: { css: string } };
    const text = (s: string) => parseTemplate(s).parts.join('');
    expect(text(args.value)).toBe('cost: ${price}');
    expect(text(args.target.css)).toBe('input[name="${x}"]');
  });

  it('makes an upload slot an array input defaulting to the stored files, and honours filesDir', async () => {
    const r = await recording([{ kind: 'upload', target: '#f', files: ['r.csv'], slot: 'docs' }], ['docs']);
    const flow = recordingToFlow(r, { filesDir: 'elsewhere/shop.files/' });
    const hex = digestBytes('a,b\n').slice(7);
    expect(flow.inputs).toEqual({ docs: { type: 'array', items: { type: 'string' }, default: [`elsewhere/shop.files/${hex}/r.csv`] } });
    expect(flow.steps[0]!.args).toEqual({ target: { css: '#f' }, files: '${inputs.docs}' });
    expect(flow.output).toBeUndefined();
  });

  it('keeps a list-valued select slot as an array input', async () => {
    const r = await recording([{ kind: 'select', target: '#m', value: ['a', 'b'], slot: 'tags' }], ['tags']);
    expect(recordingToFlow(r).inputs).toEqual({ tags: { type: 'array', items: { type: 'string' }, default: ['a', 'b'] } });
  });
});

describe('recordingToFlow of format 2', () => {
  it('pins each kind to the tool version of the format and gives a long wait a longer step', async () => {
    const r = await recording([
      { kind: 'navigate', url: 'http://127.0.0.1:9/' },
      { kind: 'press', key: 'Enter', target: '#q' },
      { kind: 'press', key: 'Tab' },
      { kind: 'click', target: '#a', count: 2, button: 'right' },
      { kind: 'hover', target: '#m' },
      { kind: 'check', target: '#c' },
      { kind: 'uncheck', target: '#c' },
      { kind: 'wait', target: '#r', text: 'cost ${x}', timeout_ms: 45_000 },
      { kind: 'wait', target: '#s', state: 'hidden', timeout_ms: 1000 },
    ]);
    const flow = recordingToFlow(r);
    expect(flow.steps.map((s) => `${s.id} ${s.tool}`)).toEqual([
      'navigate_1 browser/navigate@1.0',
      'press_2 browser/press@1.0',
      'press_3 browser/press@1.0',
      'click_4 browser/click@1.1',
      'hover_5 browser/hover@1.0',
      'check_6 browser/check@1.0',
      'uncheck_7 browser/uncheck@1.0',
      'wait_8 browser/wait@1.0',
      'wait_9 browser/wait@1.0',
    ]);
    expect(flow.steps[1]!.args).toEqual({ key: 'Enter', target: { css: '#q' } });
    expect(flow.steps[2]!.args).toEqual({ key: 'Tab' });
    expect(flow.steps[3]!.args).toEqual({ target: { css: '#a' }, count: 2, button: 'right' });
    expect(flow.steps[7]).toMatchObject({ args: { target: { css: '#r' }, text: 'cost $${x}', timeout_ms: 45_000 }, timeout_ms: 47_000 });
    // A short wait fits in the default step timeout.
    expect(flow.steps[8]).toEqual({ id: 'wait_9', tool: 'browser/wait@1.0', args: { target: { css: '#s' }, state: 'hidden', timeout_ms: 1000 } });
  });
});

describe('frame in the Flow', () => {
  it('passes a frame to the step as a list and escapes its text', async () => {
    const r = await recording([
      { kind: 'extract', target: '#r', name: 'r', frame: ['#outer', 'iframe[name="${x}"]'] },
      { kind: 'drag', source: '#a', target: '#b', frame: '#board' },
    ]);
    const flow = recordingToFlow(r);
    expect(flow.steps[0]).toEqual({
      id: 'extract_1',
      tool: 'browser/extract@1.1',
      args: { target: { css: '#r' }, frame: [{ css: '#outer' }, { css: 'iframe[name="$${x}"]' }] },
    });
    expect(flow.steps[1]!.args).toEqual({ source: { css: '#a' }, target: { css: '#b' }, frame: [{ css: '#board' }] });
  });
});

describe('new pages in the Flow', () => {
  it('passes opens_page to the action and makes switch a step of its own', async () => {
    const r = await recording([
      { kind: 'click', target: '#tab', opens_page: true },
      { kind: 'switch', page: 1 },
    ]);
    expect(recordingToFlow(r).steps).toEqual([
      { id: 'click_1', tool: 'browser/click@1.1', args: { target: { css: '#tab' }, opens_page: true } },
      { id: 'switch_2', tool: 'browser/switch@1.0', args: { page: 1 } },
    ]);
  });
});

describe('extract text in the Flow', () => {
  it('passes text: rendered to extract@1.1', async () => {
    const r = await recording([{ kind: 'extract', target: 'pre', name: 'p', text: 'rendered', all: true }]);
    expect(recordingToFlow(r).steps[0]).toEqual({
      id: 'extract_1',
      tool: 'browser/extract@1.1',
      args: { target: { css: 'pre' }, all: true, text: 'rendered' },
    });
  });
});
