import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slotName } from '../../src/service/studio/capture-append.js';

/** The committed capture bundle is the one page-script.ts builds to (run scripts/build-capture-script.mjs when it is not). */
describe('studio capture script', () => {
  it('page-script.generated.ts is fresh', async () => {
    const { bundleCaptureScript } = (await import(resolve(import.meta.dirname, '../../scripts/build-capture-script.mjs'))) as {
      bundleCaptureScript(): Promise<string>;
    };
    const committed = await readFile(resolve(import.meta.dirname, '../../adapters/executor-playwright/studio/page-script.generated.ts'), 'utf8');
    expect(committed === (await bundleCaptureScript())).toBe(true);
  });

  it('slot names from field names are identifiers', () => {
    expect(slotName('password', 'x')).toBe('password');
    expect(slotName('user[pass-word]', 'x')).toBe('user_pass_word');
    expect(slotName('2fa code', 'x')).toBe('_2fa_code');
    expect(slotName('', 'password')).toBe('password');
    expect(slotName('***', 'password')).toBe('password');
    expect(slotName(42, 'password')).toBe('password');
  });
});
