import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../../cli/args.js';
import { collectInputs, parseInputPairs, parseInputValue } from '../../../cli/inputs.js';
import type { InputContract } from '../../../src/flow/types.js';
import { resolveInputs } from '../../../src/run/inputs.js';
import type { FlowSpec } from '../../../src/flow/types.js';

// Issue 12: `--input pet=12` for an input declared `string` was refused because `12` parses as JSON.
// The declared type now directs parsing: a string input takes the raw text.

const contract = (type: InputContract['type'], schema: Record<string, unknown> = { type }, secret = false): InputContract => ({
  type,
  required: false,
  secret,
  schema,
});
const CONTRACTS: Record<string, InputContract> = {
  pet: contract('string'),
  n: contract('number'),
  i: contract('integer'),
  on: contract('boolean'),
  tags: contract('array', { type: 'array' }),
  obj: contract('object'),
  size: contract('enum', { enum: ['1', '2', 3, true] }),
  token: contract('string', { type: 'string', pattern: '^secret:[A-Za-z0-9_.\\-/]+$' }, true),
};
const spec = { flowspec: 1, name: 'typed', steps: [], inputs: CONTRACTS } as unknown as FlowSpec;

describe('--input k=v is typed by the declared input', () => {
  it('a string input takes the raw text, whatever it looks like', () => {
    for (const raw of ['12', '01234', '-0', '1e3', 'true', 'null', '"quoted"', '["a"]', '{"a":1}', '', ' 12 ', 'Ada', 'a=b']) {
      expect(parseInputValue(raw, CONTRACTS.pet)).toBe(raw);
    }
  });

  it('a secret input takes the reference as text', () => {
    expect(parseInputValue('secret:api/key', CONTRACTS.token)).toBe('secret:api/key');
  });

  it('other types parse JSON when they can, else keep the text for the contract to refuse', () => {
    expect(parseInputValue('12', CONTRACTS.n)).toBe(12);
    expect(parseInputValue('7', CONTRACTS.i)).toBe(7);
    expect(parseInputValue('true', CONTRACTS.on)).toBe(true);
    expect(parseInputValue('["a",1]', CONTRACTS.tags)).toEqual(['a', 1]);
    expect(parseInputValue('{"a":{"b":2}}', CONTRACTS.obj)).toEqual({ a: { b: 2 } });
    expect(parseInputValue('twelve', CONTRACTS.n)).toBe('twelve');
  });

  it('an enum takes the text when it is one of its string values, else parses JSON', () => {
    expect(parseInputValue('1', CONTRACTS.size)).toBe('1');
    expect(parseInputValue('3', CONTRACTS.size)).toBe(3);
    expect(parseInputValue('true', CONTRACTS.size)).toBe(true);
  });

  it('undeclared names keep the old rule (JSON if it parses), and the contract names them', () => {
    expect(parseInputValue('12')).toBe(12);
    expect(parseInputPairs(['pet=12', 'n=12', 'extra=12', 'pet=007'], CONTRACTS)).toEqual({ pet: '007', n: 12, extra: 12 });
  });

  it('the typed pairs pass the contract where the old parse was refused', () => {
    const typed = parseInputPairs(['pet=12', 'n=12', 'size=1'], CONTRACTS);
    expect(resolveInputs(spec, typed).inputs).toMatchObject({ pet: '12', n: 12, size: '1' });
    const untyped = parseInputPairs(['pet=12']);
    expect(() => resolveInputs(spec, untyped)).toThrow(/pet must be string/);
  });
});

describe('--input-file values', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-typed-'));
    await writeFile(
      join(dir, 'in.yaml'),
      'pet: 12\nzip: 01234\nquoted: "12"\nflag: true\nnothing: ~\nn: 12\nsize: 1\ntags: [1, 2]\nobj: {a: 1}\nfolded: two\n  words\n',
    );
    await writeFile(join(dir, 'in.json'), JSON.stringify({ pet: 12, n: 12 }));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('an unquoted YAML scalar given to a string input is its text; typed YAML stays typed for other types', async () => {
    const contracts = {
      ...CONTRACTS,
      zip: contract('string'),
      quoted: contract('string'),
      flag: contract('string'),
      nothing: contract('string'),
      folded: contract('string'),
    };
    const inputs = await collectInputs(parseArgs(['--input-file', 'in.yaml']), dir, contracts);
    expect(inputs).toEqual({
      pet: '12',
      zip: '01234',
      quoted: '12',
      flag: 'true',
      nothing: '~',
      n: 12,
      size: '1',
      tags: [1, 2],
      obj: { a: 1 },
      folded: 'two words',
    });
  });

  it('a JSON file is typed as written: a number for a string input stays a number (and the contract refuses it)', async () => {
    const inputs = await collectInputs(parseArgs(['--input-file', 'in.json']), dir, CONTRACTS);
    expect(inputs).toEqual({ pet: 12, n: 12 });
    expect(() => resolveInputs(spec, inputs)).toThrow(/pet must be string/);
  });

  it('pairs still override files, and are typed the same way', async () => {
    const inputs = await collectInputs(parseArgs(['--input-file', 'in.json', '--input', 'pet=13']), dir, CONTRACTS);
    expect(inputs).toEqual({ pet: '13', n: 12 });
  });
});
