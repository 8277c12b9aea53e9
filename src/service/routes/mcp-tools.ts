import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ProgressToken,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import packageJson from '../../../package.json' with { type: 'json' };
import { prettyJson, type Digest } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import type { FlowSpec } from '../../flow/types.js';
import { toolAnnotations } from '../../mcp/annotations.js';
import { serverInstructions, toolTitle } from '../../mcp/presentation.js';
import { createProgressFromJournal } from '../../mcp/progress.js';
import {
  argumentIssues,
  errorResult,
  failedRunResult,
  invalidInputsResult,
  META,
  RUN_VIEW_URI,
  succeededRunResult,
  toolMeta,
  unknownTool,
} from '../../mcp/results.js';
import { queuedView, RUN_VIEW_RESOURCE, readRunViewResource, runView, withRunView } from '../../mcp/run-view.js';
import { toolInputSchema, toolOutputShape } from '../../mcp/tool-schemas.js';
import type { ApiKeyRecord, AutomationRecord, ExecutionRecord, McpToolRow } from '../../ports/service-storage.js';
import type { JournalEntry } from '../../run/types.js';
import type { JsonSchema } from '../../tools/types.js';
import type { ServiceDeps } from '../context.js';
import { enqueueRun, queueDispatch, recordOutcome, runResult, runSync, secretInputsOf, type Dispatchable } from '../domain/dispatch.js';
import { serviceErrorBody } from '../errors.js';

/**
 * The tools of the hosted MCP endpoint (routes/mcp.ts is its HTTP and JSON-RPC side): one tool per
 * automation of the key's org that is published, MCP-enabled and within the key's scope, listed from
 * caches kept under the org's tool fingerprint, and called through the run dispatch (sync, with
 * progress from the run's journal in SSE mode, or queued).
 */

interface ToolShape {
  inputSchema: JsonSchema;
  output: ReturnType<typeof toolOutputShape>;
  annotations: ReturnType<typeof toolAnnotations>;
  secretInputs: string[];
}

/** The extra tool of queue dispatch (spec "Hosted MCP endpoint"). */
export const RUN_STATUS_TOOL = 'get-run-status';
const RUN_STATUS_TOOL_DEF: McpTool = {
  name: RUN_STATUS_TOOL,
  description:
    'The status of a run a queued tool call started: queued, running, succeeded (with its output), failed (with the failing step and error code) or canceled.',
  inputSchema: {
    type: 'object',
    properties: { run_id: { type: 'string', description: 'The run_id the queued call answered' } },
    required: ['run_id'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
  // Its results carry the run view too: a host with MCP Apps shows the polled run.
  _meta: { ui: { resourceUri: RUN_VIEW_URI }, 'ui/resourceUri': RUN_VIEW_URI },
};

/**
 * A failed dispatch as a tool result, in the stdio server's vocabulary (src/mcp/results.ts). Inputs
 * the engine refused are `invalid_inputs` with their issues (the dispatch names them as request
 * fields, `inputs.<name>`: the tool's arguments are the inputs themselves). A database outage is
 * `unavailable` in words (never the storage's own message, which names the database host); any other
 * error that is not a FlowError is a bug and is rethrown (the SDK answers it as a JSON-RPC error).
 */
function toolError(name: string, err: unknown): CallToolResult {
  const { status, body } = serviceErrorBody(err);
  if (status === 503 && body.error === 'unavailable') return errorResult({ code: 'unavailable', message: String(body.message) });
  if (!isFlowError(err)) throw err;
  const data = err.data as { issues?: { path?: unknown; message?: string }[] } | undefined;
  if (err.code === 'invalid_request' && Array.isArray(data?.issues) && data.issues.every((i) => Array.isArray(i.path) && i.path[0] === 'inputs')) {
    return invalidInputsResult(
      name,
      data.issues.map((i) => ({ path: (i.path as unknown[]).slice(1).join('.'), message: i.message ?? 'is invalid' })),
    );
  }
  return errorResult({ code: err.code, message: err.message, ...(data?.issues ? { issues: data.issues } : {}) });
}

/** The tool catalog and SDK servers of one service (its caches live as long as it). */
export function mcpTools(deps: ServiceDeps) {
  // Tool schemas by digest: a FlowSpec never changes, so tools/list never recompiles.
  const shapes = new Map<string, ToolShape>();
  const specs = new Map<string, FlowSpec>();
  // The SDK server builds an Ajv instance (with formats) per Server unless given one: with a server
  // per request that was a fixed cost on every request, so one validator serves them all (the
  // endpoint never elicits, the only thing the SDK server validates with it).
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  const shapeOf = (digest: string, spec: FlowSpec): ToolShape => {
    let shape = shapes.get(digest);
    if (!shape) {
      shape = {
        inputSchema: toolInputSchema(spec),
        output: toolOutputShape(spec, deps.tools),
        annotations: toolAnnotations(spec),
        secretInputs: secretInputsOf(spec),
      };
      shapes.set(digest, shape);
    }
    return shape;
  };
  const specOf = async (digest: string): Promise<FlowSpec | undefined> => {
    let spec = specs.get(digest);
    if (!spec) {
      spec = (await deps.engine?.resolve({ digest: digest as Digest }))?.spec;
      if (spec) specs.set(digest, spec);
    }
    return spec;
  };

  /**
   * The automations this key sees as tools (tools/list): one narrow query (published or failing,
   * live digest, mcp_enabled), then the key's scope. Specs and shapes come from the digest caches.
   */
  // Each org's tool rows, kept with the fingerprint they were read under (bounded, oldest org out
  // first). A request asks only the fingerprint; the rows are read again when it moved. Rows are
  // kept only when the fingerprint was the same before and after reading them, so a change racing
  // the read is never cached under the older fingerprint.
  const rowsByOrg = new Map<string, { fp: string; rows: McpToolRow[] }>();
  const MAX_CACHED_ORGS = 1000;
  const toolRows = async (orgId: string): Promise<{ fp: string; rows: McpToolRow[]; stable: boolean }> => {
    const fp = await deps.storage.automations.mcpToolsFingerprint(orgId);
    const cached = rowsByOrg.get(orgId);
    if (cached?.fp === fp) return { fp, rows: cached.rows, stable: true };
    const rows = await deps.storage.automations.listMcpTools(orgId);
    const stable = (await deps.storage.automations.mcpToolsFingerprint(orgId)) === fp;
    if (stable) {
      rowsByOrg.delete(orgId);
      rowsByOrg.set(orgId, { fp, rows });
      if (rowsByOrg.size > MAX_CACHED_ORGS) rowsByOrg.delete(rowsByOrg.keys().next().value!);
    }
    return { fp, rows, stable };
  };

  const visible = async (
    key: ApiKeyRecord,
    rows?: McpToolRow[],
  ): Promise<{ automation: Pick<AutomationRecord, 'name' | 'task'>; digest: string; spec: FlowSpec }[]> => {
    const scope = key.automations !== undefined ? new Set(key.automations) : undefined;
    const out = [];
    for (const row of rows ?? (await toolRows(key.org_id)).rows) {
      if (scope && !scope.has(row.name)) continue;
      const spec = await specOf(row.live_digest);
      if (spec) out.push({ automation: row, digest: row.live_digest, spec });
    }
    return out;
  };

  /** The one tool `name` if this key sees it (tools/call): the rules of `visible`, by name. */
  const visibleByName = async (key: ApiKeyRecord, name: string): Promise<{ automation: AutomationRecord; digest: string; spec: FlowSpec } | undefined> => {
    if (key.automations !== undefined && !key.automations.includes(name)) return undefined;
    const a = await deps.storage.automations.getByName(key.org_id, name);
    if (!a || a.status === 'draft' || !a.live_digest || a.mcp_enabled === false) return undefined;
    const spec = await specOf(a.live_digest);
    return spec ? { automation: a, digest: a.live_digest, spec } : undefined;
  };

  // Queue dispatch: a call answers `{run_id, status: "queued"}` at once, so tools declare no output
  // schema, and `get-run-status` (unless an automation of the org has that name) answers the rest.
  const queued = queueDispatch(deps);
  const toolOf = (t: { automation: Pick<AutomationRecord, 'name' | 'task'>; digest: string; spec: FlowSpec }): McpTool => {
    const shape = shapeOf(t.digest, t.spec);
    return {
      name: t.automation.name,
      title: toolTitle(t.automation.name),
      description: t.automation.task || t.spec.description || `Run the automation ${t.automation.name}.`,
      inputSchema: shape.inputSchema as McpTool['inputSchema'],
      ...(shape.output.schema && !queued ? { outputSchema: shape.output.schema as McpTool['outputSchema'] } : {}),
      annotations: shape.annotations,
      _meta: toolMeta(t.digest, shape.secretInputs),
    };
  };

  /** Whether this key's org gets the extra `get-run-status` tool: queue dispatch, and no automation of that name. */
  const hasStatusTool = async (key: ApiKeyRecord): Promise<boolean> => queued && !(await deps.storage.automations.getByName(key.org_id, RUN_STATUS_TOOL));

  /** `get-run-status`: a run of the key's org (and scope), by engine run id or execution id. */
  const runStatus = async (key: ApiKeyRecord, args: Record<string, unknown>): Promise<CallToolResult> => {
    const runId = args.run_id;
    if (typeof runId !== 'string' || runId.length === 0 || runId.length > 200 || Object.keys(args).some((k) => k !== 'run_id')) {
      return invalidInputsResult(RUN_STATUS_TOOL, [{ path: 'run_id', message: 'is required: a string, the run_id a queued call answered (and nothing else)' }]);
    }
    const execution = (await deps.storage.executions.getByRunId(key.org_id, runId)) ?? (await deps.storage.executions.get(key.org_id, runId));
    // Another org's run, or one outside the key's scope, is the same answer as an unknown one.
    if (!execution || (key.automations !== undefined && !key.automations.includes(execution.flow))) {
      return errorResult({ code: 'not_found', message: `no run ${runId.slice(0, 80)} for this key` });
    }
    const run = await deps.engine!.getRun(execution.run_id);
    const terminal = run && (run.status === 'succeeded' || run.status === 'failed' || run.status === 'canceled');
    const status = terminal
      ? runResult(run)
      : {
          run_id: execution.run_id,
          status: execution.status === 'queued' || run?.status === 'pending' ? 'queued' : 'running',
          flow_digest: execution.flow_digest,
          output: null,
        };
    const structured = { ...status, flow: execution.flow } as Record<string, unknown>;
    const view = run
      ? await runView(execution.flow, { id: run.id, status: status.status, journal: run.journal }, (d) => deps.engine!.getArtifact(d))
      : queuedView(execution.flow, execution.run_id);
    return withRunView<CallToolResult>({ content: [{ type: 'text', text: prettyJson(structured) }], structuredContent: structured }, view);
  };

  /**
   * The serialized `tools/list` result of one org, key scope and status-tool choice, kept under the
   * org's tool fingerprint (bounded, oldest out first): a list of 1,000 tools is 0.5 MiB of JSON, and
   * building and serializing it was most of a tools/list request (bench/RESULTS.md#hosted-mcp).
   */
  const listCache = new Map<string, { fp: string; json: string }>();
  const MAX_CACHED_LISTS = 1000;
  const toolsListJson = async (key: ApiKeyRecord): Promise<string> => {
    const statusTool = await hasStatusTool(key);
    const cacheKey = `${key.org_id}\n${statusTool ? 1 : 0}\n${key.automations === undefined ? '*' : JSON.stringify([...key.automations].sort())}`;
    const { fp, rows, stable } = await toolRows(key.org_id);
    const hit = listCache.get(cacheKey);
    if (hit?.fp === fp) return hit.json;
    const tools = (await visible(key, rows)).map(toolOf);
    if (statusTool) tools.push(RUN_STATUS_TOOL_DEF);
    const json = JSON.stringify({ tools });
    if (stable) {
      listCache.delete(cacheKey);
      listCache.set(cacheKey, { fp, json });
      if (listCache.size > MAX_CACHED_LISTS) listCache.delete(listCache.keys().next().value!);
    }
    return json;
  };

  // The server instructions (docs/mcp.md, "Hosted"): the same for every key of this service.
  const site = deps.settings.publicUrl.replace(/\/+$/, '');
  const instructions = serverInstructions({
    what: 'one published automation of this organization (the tool name is the automation name)',
    runs: `Open it in the web app at ${site}/runs/<run_id> (every run: ${site}/runs), or read it with GET ${site}/api/executions/<run_id>.`,
    ...(queued
      ? {
          extra: `Calls are queued: a call answers {run_id, status: "queued"} at once; poll the ${RUN_STATUS_TOOL} tool with that run_id for the status and the output.`,
        }
      : {}),
  });

  /**
   * The SDK answers a handler's throw as JSON-RPC error -32603 carrying its message: anything that is
   * not an McpError is a bug here (a storage failure), logged and answered without its text.
   */
  const internal = <T>(fn: () => Promise<T>): Promise<T> =>
    fn().catch((err: unknown) => {
      if (err instanceof McpError) throw err;
      deps.logger.error(`[flowctl] [service] mcp: ${(err as Error)?.stack ?? String(err)}`);
      throw new McpError(ErrorCode.InternalError, 'internal error');
    });

  /**
   * One tools/call, for either protocol era (the 1.x SDK server below, the v2 one in mcp-modern.ts).
   * `notify` sends a progress notification (absent: no progress is sent). `hangup` cancels the run
   * when it aborts (the client disconnected from an SSE response): engine.cancel, and the journal ends
   * with run_finished, status canceled. Without it a run goes on if the caller hangs up, as at the gateway.
   */
  const callTool = async (
    key: ApiKeyRecord,
    params: { name: string; arguments?: Record<string, unknown> | undefined; progressToken?: ProgressToken | undefined },
    io: {
      notify?: (params: { progressToken: ProgressToken; progress: number; total?: number; message?: string }) => Promise<void>;
      hangup?: AbortSignal | undefined;
    },
  ): Promise<CallToolResult> => {
    const { name } = params;
    const hangup = io.hangup;
    if (name === RUN_STATUS_TOOL && (await hasStatusTool(key))) return runStatus(key, params.arguments ?? {});
    const found = await visibleByName(key, name);
    // A tool the key does not see is the same error as a tool that does not exist.
    if (!found) throw unknownTool(name);
    const shape = shapeOf(found.digest, found.spec);
    const args = params.arguments ?? {};
    const issues = argumentIssues(name, shape, args);
    if (issues.length > 0) return invalidInputsResult(name, issues);
    const target: Dispatchable = { automation: found.automation, digest: found.digest as Digest, spec: found.spec };
    if (queued) {
      try {
        const q = await enqueueRun(deps, target, args as Record<string, unknown>, { kind: 'mcp', keyId: key.id });
        const ack = { run_id: q.run_id, status: 'queued' };
        return withRunView<CallToolResult>(
          {
            content: [{ type: 'text', text: prettyJson(ack) }],
            structuredContent: ack,
            _meta: { [META.runId]: q.run_id, [META.status]: 'queued', [META.flowDigest]: q.flow_digest },
          },
          queuedView(name, q.run_id),
        );
      } catch (err) {
        return toolError(name, err);
      }
    }
    const token = params.progressToken;
    const progress = createProgressFromJournal(found.spec.steps.length);
    // Progress is the run's real journal, each entry as it is appended (never invented), sent in order.
    let sent: Promise<unknown> = Promise.resolve();
    let runId: string | undefined;
    let execution: ExecutionRecord | undefined;
    // A hang-up cancels the run and records it at once (the step in flight may take a while to
    // notice; its own end records the same outcome again).
    const cancelRun = () => {
      if (!runId) return;
      const id = runId;
      void deps
        .engine!.cancel(id)
        .then(() => deps.engine!.getRun(id))
        .then((r) => (r && execution ? recordOutcome(deps, execution, r) : undefined))
        .catch(() => undefined);
    };
    hangup?.addEventListener('abort', cancelRun, { once: true });
    let run;
    try {
      run = await runSync(
        deps,
        target,
        args as Record<string, unknown>,
        { kind: 'mcp', keyId: key.id },
        {
          onRunId: (id, row) => {
            runId = id;
            execution = row;
            if (hangup?.aborted) cancelRun();
          },
          onEntry: (entry) => {
            const update = progress(entry as JournalEntry);
            const notify = io.notify;
            if (update && token !== undefined && notify && !hangup?.aborted) {
              sent = sent.then(() => notify({ progressToken: token, ...update }).catch(() => undefined));
            }
          },
        },
      );
    } catch (err) {
      return toolError(name, err);
    } finally {
      hangup?.removeEventListener('abort', cancelRun);
    }
    await sent;
    const result = run.status === 'succeeded' ? succeededRunResult(name, run, shape.output) : failedRunResult(name, run);
    return withRunView(result, await runView(name, run, (d) => deps.engine!.getArtifact(d)));
  };

  /** The MCP Apps resources (resources/list, resources/read): the run view, the same for every key. */
  const listResources = () => ({ resources: [RUN_VIEW_RESOURCE] });
  const readResource = (uri: string) => {
    const found = readRunViewResource(uri);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${JSON.stringify(uri.slice(0, 200))}`, { uri: uri.slice(0, 200) });
    return found;
  };

  /**
   * The 1.x SDK server of one legacy-era request (2025-11-25 and older). `hangup` is the request's
   * abort signal in SSE mode (see callTool); progress is sent only in SSE mode.
   */
  function buildServer(key: ApiKeyRecord, progressAllowed: boolean, hangup?: AbortSignal): Server {
    const server = new Server(
      { name: 'flowctl-hosted', version: packageJson.version },
      { capabilities: { tools: {}, resources: {} }, jsonSchemaValidator, instructions },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => internal(async () => JSON.parse(await toolsListJson(key)) as { tools: McpTool[] }));
    server.setRequestHandler(ListResourcesRequestSchema, () => listResources());
    server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(request.params.uri));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      internal(() =>
        callTool(
          key,
          { name: request.params.name, arguments: request.params.arguments, progressToken: request.params._meta?.progressToken },
          {
            ...(progressAllowed ? { notify: (params) => extra.sendNotification({ method: 'notifications/progress', params }) } : {}),
            hangup,
          },
        ),
      ),
    );
    return server;
  }

  return { toolsListJson, visibleByName, shapeOf, buildServer, callTool, listResources, readResource, instructions, internal };
}
