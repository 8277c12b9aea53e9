import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWCTL_BIN } from '../helpers/cli.js';
import { mcpProject } from './mcp-helpers.js';

// The official MCP Inspector's headless CLI (`inspector --cli <command> --method ...`) against the
// spawned `flowctl mcp`: an independent client checks our server.
const require = createRequire(import.meta.url);
const INSPECTOR = join(require.resolve('@modelcontextprotocol/inspector/package.json').replace(/package\.json$/, ''), 'clients/launcher/build/index.js');

function inspector(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    // The Inspector keeps a catalog of servers; keep it inside the temp project.
    for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', MCP_CATALOG_PATH: join(cwd, 'inspector-catalog.json') }))
      if (v !== undefined) env[k] = v;
    const child = spawn(process.execPath, [INSPECTOR, '--cli', process.execPath, FLOWCTL_BIN, 'mcp', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mcpProject();
});

describe('MCP Inspector CLI against flowctl mcp', () => {
  it('tools/list (with --strict schema checks) lists every flow as a tool', async () => {
    const r = await inspector(dir, ['--method', 'tools/list', '--strict']);
    expect(r.code, r.stderr).toBe(0);
    const { tools } = JSON.parse(r.stdout);
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['broken', 'count', 'hello', 'save', 'secretecho']);
    const hello = tools.find((t: { name: string }) => t.name === 'hello');
    expect(hello.inputSchema.properties.who).toMatchObject({ type: 'string', default: 'world' });
    expect(hello.annotations.readOnlyHint).toBe(true);
    expect(r.stderr).toMatch(/0 errors/);
  });

  it('tools/call runs a flow and returns its structuredContent', async () => {
    const r = await inspector(dir, ['--method', 'tools/call', '--tool-name', 'hello', '--tool-arg', 'who=Inspector']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.structuredContent).toEqual({ greeting: 'Hello, Inspector!' });
    expect(result.isError).toBeFalsy();
  });
});
