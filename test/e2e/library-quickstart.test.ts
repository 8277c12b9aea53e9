import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

// The library quick start of issue 32, "Defaults", as a consumer writes it: `flowctl/engine` resolved
// through node_modules to the built package (dist/, so `npm run build` first), with no options.
const FLOW = `name: hello
inputs:
  who: { type: string }
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello, {{ who }}!"
      values: { who: "\${inputs.who}" }
output: \${steps.greet.output.text}
`;

const BODY = `const yamlText = readFileSync('hello.yaml', 'utf8');
const r = compile(yamlText);
const run = await createEngine().run({ spec: r.spec }, { who: 'Ada' });
console.log(JSON.stringify({ status: run.status, output: run.output }));
`;

const ESM = `import { readFileSync } from 'node:fs';
import { compile, createEngine } from 'flowctl/engine';
${BODY}`;

const CJS = `const { readFileSync } = require('node:fs');
const { compile, createEngine } = require('flowctl/engine');
(async () => {
${BODY}})();
`;

describe('library quick start from the built flowctl/engine', () => {
  let app: string;

  beforeAll(async () => {
    app = await mkdtemp(join(tmpdir(), 'flowctl-quickstart-'));
    await mkdir(join(app, 'node_modules'));
    await symlink(ROOT, join(app, 'node_modules', 'flowctl'), 'dir');
    await writeFile(join(app, 'hello.yaml'), FLOW);
    await writeFile(join(app, 'quickstart.mjs'), ESM);
    await writeFile(join(app, 'quickstart.cjs'), CJS);
  });
  afterAll(async () => {
    if (app) await rm(app, { recursive: true, force: true });
  });

  for (const file of ['quickstart.mjs', 'quickstart.cjs']) {
    it(`compiles and runs a flow with no options (${file})`, async () => {
      const { stdout } = await run(process.execPath, [file], { cwd: app });
      expect(JSON.parse(stdout)).toEqual({ status: 'succeeded', output: 'Hello, Ada!' });
    });
  }
});
