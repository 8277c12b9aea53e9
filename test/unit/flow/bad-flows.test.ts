import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../../src/flow/compile.js';
import { DIAGNOSTIC_CODES } from '../../../src/flow/diagnostics.js';
import { parseLock } from '../../../src/tools/lock.js';
import { testRegistry } from './test-tools.js';

/**
 * Every malformed flow in test/fixtures/bad-flows has an entry in expectations.json naming the
 * diagnostic code, line, column (1-based) and field it must produce. `<name>.lock.json` beside a
 * flow is the lock it compiles against.
 */
const dir = resolve(import.meta.dirname, '../../fixtures/bad-flows');
const expectations = JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as Record<
  string,
  { code: string; line: number; column: number; field?: string }
>;
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('bad flows', () => {
  it('has at least 30 fixtures, each with an expectation, and no expectation without a fixture', () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
    expect(Object.keys(expectations).sort()).toEqual(files);
  });

  it('covers syntax, types, references, cycles, names, unknown tools and the lock', () => {
    const codes = new Set(Object.values(expectations).map((e) => e.code));
    for (const code of [
      'yaml_syntax',
      'type_mismatch',
      'unknown_input',
      'unknown_step',
      'forward_reference',
      'bad_name',
      'unknown_tool',
      'lock_mismatch',
      'expr_syntax',
      'duplicate_step',
    ]) {
      expect(codes, code).toContain(code);
    }
    for (const code of codes) expect(DIAGNOSTIC_CODES).toContain(code);
  });

  it.each(files)('%s', (file) => {
    const want = expectations[file]!;
    const lockPath = join(dir, file.replace(/\.yaml$/, '.lock.json'));
    const lock = existsSync(lockPath) ? parseLock(readFileSync(lockPath, 'utf8')) : undefined;
    const result = compile(readFileSync(join(dir, file), 'utf8'), { file: `bad-flows/${file}`, tools: testRegistry(), lock });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const hit = result.diagnostics.find((d) => d.code === want.code && d.line === want.line && d.column === want.column);
    expect(hit, JSON.stringify(result.diagnostics, null, 2)).toBeDefined();
    expect(hit!.field).toBe(want.field);
    expect(hit!.file).toBe(`bad-flows/${file}`);
    expect(hit!.severity).toBe('error');
    expect(hit!.message.length).toBeGreaterThan(10);
  });
});
