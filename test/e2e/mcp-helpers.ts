import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FLOWCTL_BIN, tempProject } from '../helpers/cli.js';

/** Flows of the MCP e2e project: built-in tools only, except `secretecho` (a real Chromium). */
export const MCP_FLOWS: Record<string, string> = {
  hello: `name: hello
description: Greets someone.
inputs:
  who:
    type: string
    description: Who to greet.
    default: world
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello, {{ who }}!"
      values:
        who: \${inputs.who}
output:
  greeting: \${steps.greet.output.text}
`,
  count: `name: count
inputs:
  n:
    type: integer
steps:
  - {id: one, tool: core/transform@1, args: {value: "\${inputs.n}"}}
  - {id: two, tool: core/transform@1, args: {value: "\${steps.one.output.value}"}}
  - {id: three, tool: core/transform@1, args: {value: "\${steps.two.output.value}"}}
output: \${steps.three.output.value}
`,
  broken: `name: broken
steps:
  - {id: first, tool: core/transform@1, args: {value: 1}}
  - {id: check, tool: core/assert@1, args: {actual: 1, expected: 2, message: one is not two}}
output:
  value: \${steps.first.output.value}
`,
  save: `name: save
inputs:
  text: {type: string}
steps:
  - {id: write, tool: fs/write@1, args: {path: out/saved.txt, content: "\${inputs.text}"}}
output:
  path: \${steps.write.output.path}
`,
  secretecho: `name: secretecho
inputs:
  url:
    type: string
  password:
    type: string
    secret: true
steps:
  - id: open
    tool: browser/navigate@1
    args:
      url: \${inputs.url}
  - id: type
    tool: browser/fill@1
    args:
      target: "#pw"
      value: \${inputs.password}
      mask: true
  - id: read
    tool: browser/extract@1
    args:
      target: "#echo"
output:
  echoed: \${steps.read.output.value}
`,
};

export const ECHO_PAGE = `<!doctype html><title>echo</title>
<input id="pw" oninput="document.getElementById('echo').textContent = 'typed:' + this.value">
<div id="echo"></div>`;

export async function mcpProject(flows: Record<string, string> = MCP_FLOWS): Promise<string> {
  const dir = await tempProject('flowctl-mcp-');
  await mkdir(join(dir, 'flows'));
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', `${name}.yaml`), text);
  return dir;
}

export interface McpSession {
  client: Client;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** The SDK Client over StdioClientTransport against a spawned `flowctl mcp ...` in `cwd`. */
export async function connectMcp(cwd: string, args: string[] = [], env: Record<string, string> = {}): Promise<McpSession> {
  const fullEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...env })) if (v !== undefined) fullEnv[k] = v;
  const transport = new StdioClientTransport({ command: process.execPath, args: [FLOWCTL_BIN, 'mcp', ...args], cwd, env: fullEnv, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'flowctl-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}
