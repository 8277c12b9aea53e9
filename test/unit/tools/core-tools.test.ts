import { describe, expect, it } from 'vitest';
import { coreAssert, coreTemplate, coreTransform } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';

const ctx = () => createTestToolContext();

describe('core/template', () => {
  it('replaces placeholders from values, by dotted path and index', async () => {
    const out = await coreTemplate.run(
      {
        template: 'Hello, {{ user.name }}! You have {{count}} items; first {{ items[0].id }}.',
        values: { user: { name: 'Ada' }, count: 3, items: [{ id: 'x1' }] },
      },
      ctx(),
    );
    expect(out).toEqual({ text: 'Hello, Ada! You have 3 items; first x1.' });
  });

  it('renders null as empty, booleans as words, objects as canonical JSON, and string literals', async () => {
    const out = await coreTemplate.run({ template: '[{{a}}][{{b}}][{{c}}][{{ "{{" }}]', values: { a: null, b: false, c: { z: 1, a: [2] } } }, ctx());
    expect(out).toEqual({ text: '[][false][{"a":[2],"z":1}][{{]' });
  });

  it('leaves text without placeholders alone (including the flow language ${...})', async () => {
    expect(await coreTemplate.run({ template: 'plain ${ not ours } {single}' }, ctx())).toEqual({ text: 'plain ${ not ours } {single}' });
  });

  it('fails on a missing value and on a malformed placeholder', async () => {
    await expect(coreTemplate.run({ template: 'Hi {{ who }}', values: {} }, ctx())).rejects.toMatchObject({
      code: 'template_missing_value',
      data: { path: 'who', retryable: false },
    });
    await expect(coreTemplate.run({ template: 'Hi {{ who ? }}', values: { who: 1 } }, ctx())).rejects.toMatchObject({ code: 'template_syntax' });
    await expect(coreTemplate.run({ template: 'Hi {{ a.toString }}', values: { a: 'x' } }, ctx())).rejects.toMatchObject({ code: 'template_missing_value' });
  });

  it('refuses input outside its schema', async () => {
    await expect(coreTemplate.run({ template: 1 }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
    await expect(coreTemplate.run({ template: 'x', other: 1 }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
  });
});

describe('core/transform', () => {
  it('returns the value as given', async () => {
    const value = { a: [1, { b: null }], s: 'x' };
    expect(await coreTransform.run({ value }, ctx())).toEqual({ value });
    expect(await coreTransform.run({ value: null }, ctx())).toEqual({ value: null });
  });

  it('requires value', async () => {
    await expect(coreTransform.run({}, ctx())).rejects.toMatchObject({
      code: 'invalid_tool_input',
      data: { issues: [{ path: 'value', message: 'is required' }] },
    });
  });
});

describe('core/assert', () => {
  it.each([true, 1, 'yes', [], {}])('passes when that is truthy: %j', async (that) => {
    expect(await coreAssert.run({ that }, ctx())).toEqual({ ok: true });
  });

  it.each([false, 0, '', null])('fails with assertion_failed when that is %j', async (that) => {
    await expect(coreAssert.run({ that, message: 'must hold' }, ctx())).rejects.toMatchObject({
      code: 'assertion_failed',
      message: expect.stringContaining('must hold'),
      data: { retryable: false },
    });
  });

  it('compares actual and expected deeply, ignoring key order', async () => {
    expect(await coreAssert.run({ actual: { a: 1, b: [1, 2] }, expected: { b: [1, 2], a: 1 } }, ctx())).toEqual({ ok: true });
    await expect(coreAssert.run({ actual: { a: 1 }, expected: { a: 2 } }, ctx())).rejects.toMatchObject({
      code: 'assertion_failed',
      data: { actual: { a: 1 }, expected: { a: 2 }, retryable: false },
    });
  });

  it('needs exactly one form', async () => {
    await expect(coreAssert.run({}, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
    await expect(coreAssert.run({ that: true, actual: 1, expected: 1 }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
    await expect(coreAssert.run({ actual: 1 }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
  });
});
