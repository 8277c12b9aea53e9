import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';

/** A pack's composite tool, installed from a lock, used by a project flow and run through `flowctl run`. */
describe('installed pack tools', () => {
  it('run a project flow whose step is a composite tool of an installed pack', async () => {
    const author = await tempProject('flowctl-packs-author-');
    const ok = async (args: string[], cwd: string) => {
      const r = await runCli(args, { cwd });
      expect(r.code, r.stderr).toBe(0);
      return r;
    };
    await ok(['init'], author);
    await writeFile(
      join(author, 'tool.json'),
      JSON.stringify({ ref: 'greeter/hello', version: '1.2.0', description: 'Greets', implementation: { flow: 'hello' } }),
    );
    await ok(['pack', 'init', 'greeter', '--version', '1.0.0'], author);
    await ok(['pack', 'add', '--body', 'flows/hello.yaml'], author);
    await ok(['pack', 'add', '--body', 'tool.json'], author);
    const published = JSON.parse((await ok(['pack', 'publish', '--registry', 'shared', '--json'], author)).stdout);
    const list = JSON.parse((await ok(['pack', 'list', '--json'], author)).stdout);
    const contractDigest = list.tools[0].contract_digest;

    const user = await tempProject('flowctl-packs-user-');
    await writeFile(
      join(user, 'flowctl.packs.lock'),
      JSON.stringify({
        schema_version: '1.0',
        packs: [{ name: 'greeter', version: '1.0.0', digest: published.digest, tools: [{ ref: 'greeter/hello', contract_digest: contractDigest }] }],
      }),
    );
    await ok(['install', '--from', join(author, 'shared')], user);
    await writeFile(
      join(user, 'use.yaml'),
      [
        'name: use',
        'inputs:',
        '  who:',
        '    type: string',
        'steps:',
        '  - id: hi',
        '    tool: greeter/hello@1',
        '    args:',
        '      who: ${inputs.who}',
        'output: ${steps.hi.output.greeting}',
        '',
      ].join('\n'),
    );
    // compile resolves the installed pack's tool and pins it in flowctl.lock
    await ok(['compile', 'use.yaml'], user);
    const lock = JSON.parse(await readFile(join(user, 'flowctl.lock'), 'utf8'));
    expect(lock.entries).toContainEqual({ ref: 'greeter/hello', version: '1.2.0', contract_digest: contractDigest });
    const run = await ok(['run', 'use.yaml', '--input', 'who=Ada', '--json'], user);
    const result = JSON.parse(run.stdout);
    expect(result.status).toBe('succeeded');
    expect(result.output).toBe('Hello, Ada!');
    const started = result.journal.find((e: { event: string }) => e.event === 'run_started');
    expect(started.contracts).toEqual([{ ref: 'greeter/hello', version: '1.2.0', contract_digest: contractDigest }]);
  });
});
