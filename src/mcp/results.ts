import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { prettyJson } from '../canonical.js';
import type { InputIssue } from '../run/inputs.js';
import type { Run, RunFinishedEntry, StepFailedEntry } from '../run/types.js';
import { validateAgainstSchema } from '../tools/contract.js';
import type { JsonSchema } from '../tools/types.js';

/**
 * The tool results every flowctl MCP server answers with, the stdio server (server.ts) and the hosted
 * endpoint (src/service/routes/mcp-tools.ts) alike, so one vocabulary serves both (docs/mcp.md,
 * "Errors"): an error result's text is `{"error": {"code", "message", ...}}`.
 */

/** `_meta` keys flowctl adds to tools and results. */
export const META = {
  flowDigest: 'flowctl/flow_digest',
  secretInputs: 'flowctl/secret_inputs',
  runId: 'flowctl/run_id',
  status: 'flowctl/status',
  runView: 'flowctl/run_view',
} as const;

/** The MCP Apps UI resource every flow tool links (run-view.ts; docs/mcp.md, "MCP Apps"). */
export const RUN_VIEW_URI = 'ui://flowctl/run-view.html';

/**
 * A flow tool's `_meta`, the same on the stdio server and the hosted endpoint: the digest it is pinned
 * to, its secret inputs (when it has any: resolved on the server, never arguments), and the MCP Apps
 * UI resource that shows its runs (`ui.resourceUri`, with the older flat key hosts still read).
 */
export function toolMeta(digest: string, secretInputs: readonly string[]): Record<string, unknown> {
  return {
    [META.flowDigest]: digest,
    ...(secretInputs.length ? { [META.secretInputs]: [...secretInputs] } : {}),
    ui: { resourceUri: RUN_VIEW_URI },
    'ui/resourceUri': RUN_VIEW_URI,
  };
}

/**
 * A tool this server does not offer (or the caller may not see: the same answer), a JSON-RPC error
 * -32602 rather than a tool result, as MCP asks for an unknown tool.
 */
export function unknownTool(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `unknown tool "${name.slice(0, 128)}"`);
}

/** An `isError` result whose text is `{"error": error}`. */
export function errorResult(error: { code: string; message: string } & Record<string, unknown>, meta: Record<string, unknown> = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: prettyJson({ error }) }], ...(Object.keys(meta).length ? { _meta: meta } : {}) };
}

/** Arguments that break the tool's inputSchema: `invalid_inputs`, every issue listed, no run started. */
export function invalidInputsResult(name: string, issues: InputIssue[]): CallToolResult {
  const list = issues.map((i) => (i.path ? `${i.path} ${i.message}` : i.message)).join('; ');
  return errorResult({ code: 'invalid_inputs', message: `[flowctl] [mcp] arguments of ${name} violate its inputs contract; no run started: ${list}`, issues });
}

/**
 * Every issue of `args` against a flow tool's inputSchema. A secret input passed as an argument gets
 * its own message (its value never enters the message: it may be a secret), and so does a name the
 * flow does not declare.
 */
export function argumentIssues(flowName: string, shape: { inputSchema: JsonSchema; secretInputs: readonly string[] }, args: unknown): InputIssue[] {
  const { ok, issues } = validateAgainstSchema(shape.inputSchema, args);
  if (ok) return [];
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [{ path: '', message: 'the arguments must be an object' }];
  const secrets = new Set(shape.secretInputs);
  const properties = (shape.inputSchema.properties ?? {}) as Record<string, unknown>;
  return issues.map((issue) => {
    const top = issue.path.split(/[.[]/)[0]!;
    if (secrets.has(top)) return { path: top, message: 'is a secret input: it resolves from the secret store and is never an argument' };
    if (top !== '' && !Object.hasOwn(properties, top)) return { path: issue.path, message: `is not an input of flow "${flowName}"` };
    return issue;
  });
}

/**
 * A failed or canceled run: its id (inspect it, replay it, open it in the web app) and the failing
 * step's error, from the journal's run_finished entry (else its last step_failed entry).
 */
export function failedRunResult(name: string, run: Pick<Run, 'id' | 'status' | 'flow_digest' | 'journal'>): CallToolResult {
  const finished = run.journal.findLast((e): e is RunFinishedEntry => e.event === 'run_finished');
  const failed = run.journal.findLast((e): e is StepFailedEntry => e.event === 'step_failed');
  const err = finished?.error ?? (failed ? { ...failed.error, step: failed.step } : undefined);
  return errorResult(
    {
      code: err?.code ?? `run_${run.status}`,
      message: `[flowctl] [mcp] run ${run.id} of ${name} ${run.status}${err ? `${err.step ? ` at step ${err.step}` : ''}: ${err.message}` : ''}`,
      run_id: run.id,
      status: run.status,
      ...(err?.step !== undefined ? { step: err.step } : {}),
      flow_digest: run.flow_digest,
    },
    { [META.runId]: run.id, [META.status]: run.status, [META.flowDigest]: run.flow_digest },
  );
}

/** A run that succeeded: its output as structuredContent (wrapped as `{value}` when the tool says so), or a text line when the flow has none. */
export function succeededRunResult(
  name: string,
  run: Pick<Run, 'id' | 'status' | 'flow_digest' | 'output'>,
  output: { schema?: unknown; wrapped: boolean },
): CallToolResult {
  const meta = { [META.runId]: run.id, [META.status]: run.status, [META.flowDigest]: run.flow_digest };
  if (!output.schema) return { content: [{ type: 'text', text: `run ${run.id} of ${name} succeeded (the flow has no output)` }], _meta: meta };
  const structured = (output.wrapped ? { value: run.output ?? null } : (run.output ?? {})) as Record<string, unknown>;
  return { content: [{ type: 'text', text: prettyJson(structured) }], structuredContent: structured, _meta: meta };
}
