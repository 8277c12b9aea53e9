import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
// The lock module itself, not flowctl/engine: LOCK_FILE_NAME is not on that entry, and importing the
// entry puts its whole shared chunk (the engine, zod, yaml) in front of `flowctl init` (3x its start time).
import { emptyLock, LOCK_FILE_NAME, serializeLock } from '../../src/tools/lock.js';
import { assertKnownFlags, UsageError, type ParsedArgs } from '../args.js';
import { EXIT, type CliIO } from '../io.js';

/**
 * The starter flow: pure (core/template only, no network), in canonical form so `flowctl lint hello`
 * reports nothing. A unit test keeps it canonical.
 */
export const HELLO_FLOW = `name: hello
description: A starter flow that greets someone. It needs no network.
inputs:
  who:
    type: string
    description: Who to greet.
    default: world
steps:
  - id: greet
    tool: core/template@1
    args:
      template: Hello, {{ who }}!
      values:
        who: \${inputs.who}
output:
  greeting: \${steps.greet.output.text}
`;

/**
 * `flowctl init`: scaffold `flows/`, `tools/`, `flowctl.lock` (empty entries) and `flows/hello.yaml`.
 * Idempotent: fills only what is missing and never overwrites a file.
 */
export default async function init(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'init', []);
  if (args.positionals.length > 0) throw new UsageError('init takes no arguments (it scaffolds the current directory)');
  const created: string[] = [];
  for (const dir of ['flows', 'tools']) {
    if (!existsSync(join(io.cwd, dir))) {
      await mkdir(join(io.cwd, dir), { recursive: true });
      created.push(`${dir}/`);
    }
  }
  const files: [string, string][] = [
    [LOCK_FILE_NAME, serializeLock(emptyLock())],
    ['flows/hello.yaml', HELLO_FLOW],
  ];
  for (const [name, content] of files) {
    const path = join(io.cwd, name);
    if (existsSync(path)) continue;
    // 'wx' refuses to overwrite a file another process created meanwhile.
    await writeFile(path, content, { flag: 'wx' });
    created.push(name);
  }
  if (created.length === 0) io.stderr.write('flowctl init: nothing to do, the project is already set up\n');
  else {
    io.stderr.write(`flowctl init: created ${created.join(', ')}\n`);
    if (created.includes('flows/hello.yaml')) io.stderr.write('next: flowctl compile hello\n');
  }
  return EXIT.ok;
}
