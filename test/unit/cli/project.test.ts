import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flowToolRefs, openSandbox, toolNeeds, usesBrowserTools } from '../../../cli/project.js';
import { isFlowError } from '../../../src/errors.js';
import { memoryIO } from './io-helpers.js';

describe('project helpers', () => {
  it('reads the tool refs of a flow before compiling it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-project-'));
    await mkdir(join(dir, 'flows'));
    await writeFile(
      join(dir, 'flows', 'mix.yaml'),
      'name: mix\nsteps:\n  - id: a\n    tool: core/template@1\n  - id: b\n    tool: "browser/navigate@1.0"\n  - id: c\n    tool: acme/thing@2\n',
    );
    await writeFile(join(dir, 'flows', 'broken.yaml'), 'name: [\n');
    const { io } = memoryIO({ cwd: dir });
    expect(await flowToolRefs('mix', io)).toEqual(['core/template', 'browser/navigate', 'acme/thing']);
    expect(await flowToolRefs('broken', io)).toEqual([]);
    expect(await flowToolRefs('missing', io)).toEqual([]);
  });

  it('loads the browser tools and packs only for flows that need them', () => {
    expect(toolNeeds(['core/template', 'fs/write', 'http/request', 'shell/exec'])).toEqual({ browser: false, packs: false });
    expect(toolNeeds(['core/template', 'browser/click'])).toEqual({ browser: true, packs: false });
    expect(toolNeeds(['acme/thing'])).toEqual({ browser: false, packs: true });
    expect(usesBrowserTools([])).toBe(false);
  });

  it('picks the sandbox from --sandbox, else FLOWCTL_SANDBOX; an unknown name lists the known ones', async () => {
    expect(await openSandbox(undefined, {})).toBeUndefined();
    expect(await openSandbox(undefined, { FLOWCTL_SANDBOX: '' })).toBeUndefined();
    const fromEnv = await openSandbox(undefined, { FLOWCTL_SANDBOX: 'subprocess' });
    expect(fromEnv?.name).toBe('subprocess');
    await fromEnv?.dispose?.();
    await expect(openSandbox('nope', { FLOWCTL_SANDBOX: 'subprocess' })).rejects.toSatisfy(
      (e) => isFlowError(e, 'unknown_sandbox') && (e.data as { known: string[] }).known.includes('subprocess'),
    );
  });
});
