import { describe, expect, it } from 'vitest';
import { assertKnownFlags, flagBool, flagString, flagStrings, parseArgs, UsageError } from '../../../cli/args.js';

describe('argument rules (spec/engine.md)', () => {
  it('rule 1: --flag is true and --no-flag is false', () => {
    expect(parseArgs(['--yes', '--no-json']).flags).toEqual({ yes: true, json: false });
  });

  it('rule 2: --key value binds only for known value flags; --key=value always binds', () => {
    expect(parseArgs(['--input', 'a=1', 'hello']).flags).toEqual({ input: 'a=1' });
    expect(parseArgs(['--input', 'a=1', 'hello']).positionals).toEqual(['hello']);
    // --dry is not a value flag: the next word stays positional
    expect(parseArgs(['--dry', 'hello'])).toEqual({ flags: { dry: true }, positionals: ['hello'] });
    expect(parseArgs(['--store=sql']).flags).toEqual({ store: 'sql' });
    expect(parseArgs(['--input=a=b=c']).flags).toEqual({ input: 'a=b=c' });
  });

  it('rule 2: every value flag of the spec binds its separated value', () => {
    const valueFlags = [
      'input',
      'input-file',
      'record-journal',
      'sandbox',
      'to',
      'step',
      'run-id',
      'version',
      'registry',
      'from',
      'lock',
      'mode',
      'packs',
      'body',
      'port',
      'host',
      'token',
      'cron',
      'name',
      'task',
      'ops',
      'secret',
    ];
    for (const f of valueFlags) expect(parseArgs([`--${f}`, 'v']).flags).toEqual({ [f]: 'v' });
  });

  it('rule 2: a value flag at the end with no value is a usage error', () => {
    expect(() => parseArgs(['--input'])).toThrow(UsageError);
  });

  it('rule 3: a repeated value flag accumulates into an array', () => {
    expect(parseArgs(['--input', 'a=1', '--input=b=2', '--input', 'c=3']).flags).toEqual({ input: ['a=1', 'b=2', 'c=3'] });
  });

  it('rule 4: a short flag is boolean unless given as -x=value', () => {
    expect(parseArgs(['-y', 'hello'])).toEqual({ flags: { y: true }, positionals: ['hello'] });
    expect(parseArgs(['-p=9000']).flags).toEqual({ p: '9000' });
  });

  it('rule 5: -- ends flag parsing', () => {
    expect(parseArgs(['--yes', '--', '--json', '-x', 'a'])).toEqual({ flags: { yes: true }, positionals: ['--json', '-x', 'a'] });
  });

  it('accessors give clear usage errors', () => {
    const args = parseArgs(['--to', 'ts', '--json', '--input', 'a=1', '--input', 'b=2']);
    expect(flagString(args, 'to')).toBe('ts');
    expect(flagStrings(args, 'input')).toEqual(['a=1', 'b=2']);
    expect(flagBool(args, 'json')).toBe(true);
    expect(flagBool(args, 'dry')).toBe(false);
    expect(() => flagString(args, 'json')).toThrow(/needs a value/);
    expect(() => flagBool(parseArgs(['--json=maybe']), 'json')).toThrow(/switch/);
    expect(() => assertKnownFlags(args, 'emit', ['to'])).toThrow(/unknown flag --json, --input/);
  });
});

describe('unknown flags', () => {
  it('name the flag once, without repeating the command prefix main() adds', () => {
    expect(() => assertKnownFlags(parseArgs(['--bogus']), 'run', ['yes'])).toThrow(/^unknown flag --bogus \(known: --yes\)$/);
    expect(() => assertKnownFlags(parseArgs(['-x']), 'runs', [])).toThrow(/^unknown flag -x \(runs takes no flags\)$/);
  });
});
