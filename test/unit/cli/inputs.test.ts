import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../../cli/args.js';
import { collectInputs, parseInputPairs, parseInputValue, readInputFile } from '../../../cli/inputs.js';
import { isFlowError } from '../../../src/errors.js';

describe('--input values', () => {
  it('parses JSON when it can, else keeps the raw string', () => {
    expect(parseInputValue('42')).toBe(42);
    expect(parseInputValue('true')).toBe(true);
    expect(parseInputValue('null')).toBe(null);
    expect(parseInputValue('["a",1]')).toEqual(['a', 1]);
    expect(parseInputValue('{"a":{"b":2}}')).toEqual({ a: { b: 2 } });
    expect(parseInputValue('"42"')).toBe('42');
    expect(parseInputValue('Ada')).toBe('Ada');
    expect(parseInputValue('')).toBe('');
    expect(parseInputValue('{not json')).toBe('{not json');
  });

  it('splits pairs at the first =, later pairs win, names are plain data', () => {
    expect(parseInputPairs(['a=1', 'b=x=y', 'a=2'])).toEqual({ a: 2, b: 'x=y' });
    const odd = parseInputPairs(['__proto__={"polluted":true}']);
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(Object.keys(odd)).toEqual(['__proto__']);
    expect(() => parseInputPairs(['novalue'])).toThrow(UsageError);
    expect(() => parseInputPairs(['=1'])).toThrow(UsageError);
  });
});

describe('--input-file', () => {
  it('reads JSON and YAML, and the pairs override files, later files override earlier ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-inputs-'));
    await writeFile(join(dir, 'a.json'), JSON.stringify({ name: 'file-a', n: 1, only_a: true }));
    await writeFile(join(dir, 'b.yaml'), 'name: file-b\nn: 2\nlist: [1, 2]\n');
    const args = parseArgs(['--input-file', 'a.json', '--input-file=b.yaml', '--input', 'n=3']);
    expect(await collectInputs(args, dir)).toEqual({ name: 'file-b', n: 3, only_a: true, list: [1, 2] });
  });

  it('rejects a missing file, bad syntax and a non-mapping with codes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-inputs-'));
    await writeFile(join(dir, 'bad.json'), '{nope');
    await writeFile(join(dir, 'list.yaml'), '- 1\n- 2\n');
    await expect(readInputFile('missing.json', dir)).rejects.toSatisfy((e) => isFlowError(e, 'input_file_unreadable'));
    await expect(readInputFile('bad.json', dir)).rejects.toSatisfy((e) => isFlowError(e, 'input_file_invalid'));
    await expect(readInputFile('list.yaml', dir)).rejects.toSatisfy((e) => isFlowError(e, 'input_file_invalid'));
  });
});
