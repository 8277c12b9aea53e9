import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveBrowser } from '../../../adapters/executor-playwright/resolve-browser.js';
import { stepBudgetMs } from '../../../adapters/executor-playwright/locate.js';
import { FlowError } from '../../../src/errors.js';

let dir: string;
let exe: string;
let plain: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-resolve-'));
  exe = join(dir, 'chromium');
  plain = join(dir, 'not-executable');
  await writeFile(exe, '#!/bin/sh\n');
  await chmod(exe, 0o755);
  await writeFile(plain, '');
});

const none = async () => undefined;

describe('browser resolution order', () => {
  it('takes the explicit option first, then CHROMIUM_PATH', async () => {
    expect(await resolveBrowser({ executablePath: exe, env: { CHROMIUM_PATH: '/nope' }, systemPaths: [], loadSparticuz: none })).toEqual({
      executablePath: exe,
      source: 'option',
    });
    expect(await resolveBrowser({ env: { CHROMIUM_PATH: exe }, systemPaths: ['/usr/bin/chromium'], loadSparticuz: none })).toEqual({
      executablePath: exe,
      source: 'env',
    });
  });

  it('refuses a wrong explicit path instead of silently using another browser', async () => {
    await expect(resolveBrowser({ env: { CHROMIUM_PATH: plain }, systemPaths: [exe], loadSparticuz: none })).rejects.toMatchObject({
      code: 'browser_not_found',
      message: expect.stringContaining(`CHROMIUM_PATH "${plain}" is not an executable file`),
    });
  });

  it('then the system paths in order, then @sparticuz/chromium', async () => {
    expect(await resolveBrowser({ env: {}, systemPaths: [join(dir, 'missing'), exe], loadSparticuz: none })).toEqual({ executablePath: exe, source: 'system' });
    const sparticuz = async () => ({ executablePath: async () => exe });
    expect(await resolveBrowser({ env: {}, systemPaths: [plain], loadSparticuz: sparticuz })).toEqual({ executablePath: exe, source: 'sparticuz' });
  });

  it('names all three sources when nothing is found', async () => {
    const err = await resolveBrowser({ env: {}, systemPaths: [join(dir, 'missing')], loadSparticuz: none }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlowError);
    expect((err as FlowError).code).toBe('browser_not_found');
    const msg = (err as FlowError).message;
    expect(msg).toContain('CHROMIUM_PATH');
    expect(msg).toContain('/usr/bin/chromium');
    expect(msg).toContain('@sparticuz/chromium');
    expect((err as FlowError).data).toEqual({ tried: [join(dir, 'missing'), '@sparticuz/chromium'] });
  });

  it("finds this machine's Chromium with the defaults", async () => {
    expect(await resolveBrowser({ env: {} })).toEqual({ executablePath: '/usr/bin/chromium', source: 'system' });
  });
});

describe('the step budget', () => {
  it('keeps a reserve (10%, at most 1 s) for the diagnosis', () => {
    expect(stepBudgetMs(30_000)).toBe(29_000);
    expect(stepBudgetMs(2_000)).toBe(1_800);
    expect(stepBudgetMs(1)).toBe(1);
  });
});
