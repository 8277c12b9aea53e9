import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import packageJson from '../../package.json' with { type: 'json' };
import type { Digest } from '../canonical.js';
import { FlowError, isFlowError } from '../errors.js';
import { servedDigest, storeServedSpec } from '../engine/resolved-flow.js';
import type { Engine } from '../engine/types.js';
import type { FlowSpec } from '../flow/types.js';
import type { InputIssue } from '../run/inputs.js';
import type { Run } from '../run/types.js';
import type { ToolRegistry } from '../tools/types.js';
import { serverInstructions, toolTitle } from './presentation.js';
import { createProgressFromJournal } from './progress.js';
import { RUN_VIEW_RESOURCE, readRunViewResource, runView, withRunView } from './run-view.js';
import { argumentIssues, errorResult, failedRunResult, invalidInputsResult, succeededRunResult, toolMeta, unknownTool } from './results.js';
import { toolShapeOf, type ToolShape } from './tool-schemas.js';

/**
 * One flow served as one MCP tool, named by `name` (the caller's: unique among this server's tools,
 * not across the engine, so two orgs' servers may each have an `invoice`). Calls run by `digest`:
 * give it when the flow was resolved already (`resolveFlow`); without it, it is computed once per
 * spec object.
 */
export interface McpFlow {
  name: string;
  spec: FlowSpec;
  digest?: Digest;
  /** The tool description. Default: the FlowSpec's description, else `Run the flow <name>.` */
  description?: string;
  /** The tool's display title. Default: the name as words (`read-title` -> `Read title`). */
  title?: string;
}

export type McpLogLevel = 'info' | 'warn' | 'error';

export interface McpServerOptions {
  /** Runs every call; runs land in its storage like any other run. */
  engine: Engine;
  /** The tools. Names must be unique and valid MCP tool names (1 to 128 of `A-Z a-z 0-9 _ - .`). */
  flows: McpFlow[];
  /**
   * Server-side log lines: one per call (run id and status) and failures. Default: dropped. On
   * stdio, send them to stderr: stdout carries only protocol messages.
   */
  onLog?: (level: McpLogLevel, message: string) => void;
  /** Types step outputs in the outputSchema from the tools' contracts. Default: none (such leaves are open, `{}`). */
  tools?: ToolRegistry;
  /** The implementation announced in `initialize`. Default `{name: 'flowctl', version: <package version>}`. */
  serverInfo?: { name: string; version: string };
  /**
   * The server instructions announced in `initialize` (what the tools are, where runs are seen).
   * Default: flowctl's text, saying runs are stored by the engine under their run id.
   */
  instructions?: string;
}

/** The default server instructions of createMcpServer (the CLI's `flowctl mcp` names its own commands). */
export const DEFAULT_INSTRUCTIONS = serverInstructions({
  what: 'one flow',
  runs: "The run is stored with the engine's other runs under that id, with its journal (every step's inputs, outputs and errors).",
});

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

interface ServedTool {
  flow: McpFlow;
  digest: Digest;
  shape: ToolShape;
  tool: McpTool;
}

/** The tool of one flow: its schemas and annotations from the cache by digest, its name and description its own. */
function buildTool(flow: McpFlow, digest: Digest, tools: ToolRegistry | undefined): ServedTool {
  const shape = toolShapeOf(flow.spec, digest, tools);
  const tool: McpTool = {
    name: flow.name,
    title: flow.title ?? toolTitle(flow.name),
    description: flow.description ?? flow.spec.description ?? `Run the flow ${flow.name}.`,
    inputSchema: shape.inputSchema as McpTool['inputSchema'],
    ...(shape.output.schema ? { outputSchema: shape.output.schema as McpTool['outputSchema'] } : {}),
    annotations: shape.annotations,
    _meta: toolMeta(digest, shape.secretInputs),
  };
  return { flow, digest, shape, tool };
}

/**
 * One MCP server over the engine, for any transport: stdio (adapters/mcp-stdio) and hosted HTTP.
 * Each flow is one tool (docs/mcp.md). A call runs the flow without asking: the MCP client already
 * decided to call the tool, and the annotations tell it which tools reach outside.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { engine, onLog } = options;
  const served = new Map<string, ServedTool>();
  for (const flow of options.flows) {
    if (!TOOL_NAME.test(flow.name)) {
      throw new FlowError('invalid_tool_name', `[flowctl] [mcp] "${flow.name}" is not a valid MCP tool name (1 to 128 of A-Z a-z 0-9 _ - .)`);
    }
    if (served.has(flow.name)) throw new FlowError('duplicate_flow', `[flowctl] [mcp] two flows are named "${flow.name}"`);
    served.set(flow.name, buildTool(flow, servedDigest(flow, 'mcp'), options.tools));
  }
  // Sorted once: tools/list answers the same list for the server's life.
  const listed = [...served.values()].sort((a, b) => (a.flow.name < b.flow.name ? -1 : 1)).map((s) => s.tool);

  const server = new Server(options.serverInfo ?? { name: 'flowctl', version: packageJson.version }, {
    capabilities: { tools: {}, resources: {} },
    instructions: options.instructions ?? DEFAULT_INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  // MCP Apps: the run view every tool links (run-view.ts).
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [RUN_VIEW_RESOURCE] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const found = readRunViewResource(request.params.uri);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${JSON.stringify(request.params.uri.slice(0, 200))}`);
    return found;
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const s = served.get(name);
    if (!s) throw unknownTool(name);
    const args = request.params.arguments ?? {};
    const issues = argumentIssues(s.flow.name, s.shape, args);
    if (issues.length > 0) {
      onLog?.('warn', `[flowctl] [mcp] ${name}: invalid arguments, no run started (${issues.length} issue${issues.length === 1 ? '' : 's'})`);
      return invalidInputsResult(name, issues);
    }

    const token = extra._meta?.progressToken;
    let sending: Promise<void> = Promise.resolve();
    const progressOf = createProgressFromJournal(s.flow.spec.steps.length);
    const onEntry =
      token === undefined
        ? undefined
        : (entry: Parameters<typeof progressOf>[0]) => {
            const update = progressOf(entry);
            if (!update) return;
            sending = sending
              .then(() => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } }))
              .catch((err: unknown) => onLog?.('warn', `[flowctl] [mcp] ${name}: a progress notification was not sent: ${(err as Error)?.message ?? err}`));
          };

    let run: Run;
    try {
      // The FlowSpec is stored once per engine and digest (no deploy: the name is this server's),
      // and the call runs the exact digest tools/list announced.
      await storeServedSpec(engine, { name: s.flow.name, digest: s.digest, spec: s.flow.spec }, 'mcp');
      run = await engine.run({ digest: s.digest }, args, { signal: extra.signal, onEntry });
    } catch (err) {
      if (!isFlowError(err)) throw err;
      onLog?.('warn', `[flowctl] [mcp] ${name}: ${err.code}: ${err.message}`);
      if (err.code === 'invalid_inputs') return invalidInputsResult(name, (err.data as { issues?: InputIssue[] })?.issues ?? []);
      return errorResult({ code: err.code, message: err.message });
    } finally {
      // Progress goes out before the result, in journal order.
      await sending;
    }
    onLog?.(run.status === 'succeeded' ? 'info' : 'warn', `[flowctl] [mcp] ${name}: run ${run.id} ${run.status}`);
    const result = run.status === 'succeeded' ? succeededRunResult(name, run, s.shape.output) : failedRunResult(name, run);
    return withRunView(result, await runView(name, run, (d) => engine.getArtifact(d)));
  });

  return server;
}
