import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runCli, tempProject, type CliResult } from '../helpers/cli.js';

/** Flows the CLI e2e tests run: only built-in tools, no network except the tests' own loopback servers. */
export const FLOWS: Record<string, string> = {
  hello: `name: hello
inputs:
  who:
    type: string
    default: world
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello, {{ who }}!"
      values:
        who: \${inputs.who}
output: \${steps.greet.output.text}
`,
  // Echoes typed inputs back, so tests can see how --input and --input-file were parsed.
  echo: `name: echo
inputs:
  name:
    type: string
    required: false
  n:
    type: number
    required: false
  on:
    type: boolean
    required: false
  tags:
    type: array
    required: false
  obj:
    type: object
    required: false
  text:
    type: string
    required: false
steps:
  - id: echo
    tool: core/transform@1
    args:
      value:
        name: \${inputs.name}
        n: \${inputs.n}
        on: \${inputs.on}
        tags: \${inputs.tags}
        obj: \${inputs.obj}
        text: \${inputs.text}
output: \${steps.echo.output.value}
`,
  // A pure step, then outward ones: the write is the effect the prompt tests look for.
  files: `name: files
inputs:
  text:
    type: string
    default: hi
steps:
  - id: pre
    tool: core/template@1
    args:
      template: "pre {{ t }}"
      values:
        t: \${inputs.text}
  - id: save
    tool: fs/write@1
    args:
      path: out/greeting.txt
      content: \${steps.pre.output.text}
  - id: back
    tool: fs/read@1
    args:
      path: out/greeting.txt
output:
  written: \${steps.save.output.path}
  read: \${steps.back.output.content}
`,
  fail: `name: fail
steps:
  - id: ok
    tool: core/template@1
    args:
      template: fine
  - id: check
    tool: core/assert@1
    retry:
      max_attempts: 2
    args:
      that: false
      message: the check is meant to fail
output: \${steps.ok.output.text}
`,
  net: `name: net
inputs:
  url:
    type: string
steps:
  - id: get
    tool: http/request@1
    args:
      url: \${inputs.url}
output: \${steps.get.output.body}
`,
};

export async function project(...names: string[]): Promise<string> {
  const dir = await tempProject('flowctl-cli-');
  await mkdir(join(dir, 'flows'), { recursive: true });
  for (const name of names) await writeFile(join(dir, 'flows', `${name}.yaml`), FLOWS[name]!);
  return dir;
}

export function flowctl(cwd: string, args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<CliResult> {
  return runCli(args, { cwd, ...options });
}

/** A loopback JSON server counting its hits. */
export async function countingServer(body: unknown = { pong: true }): Promise<{ url: string; hits: () => number; close: () => Promise<void>; server: Server }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ping`,
    hits: () => hits,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * The raw `--json` text with the lines that are the run's own removed: its id, its times (`started_at`,
 * `finished_at`, every entry's `at`) and measured durations. Everything else stays byte for byte.
 */
export function withoutOwnIdsAndTimes(json: string, runId: string): string {
  return json
    .split('\n')
    .filter((line) => !/^\s*"(started_at|finished_at|at|duration_ms)": /.test(line) && !line.includes(runId))
    .join('\n');
}
