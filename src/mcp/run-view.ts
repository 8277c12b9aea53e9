import type { Digest } from '../canonical.js';
import type { Run } from '../run/types.js';
import { RUN_VIEW_HTML } from './run-view-app.js';
import { META, RUN_VIEW_URI } from './results.js';

/**
 * The MCP Apps UI resource media type (`RESOURCE_MIME_TYPE` of @modelcontextprotocol/ext-apps, checked equal
 * in test/unit/mcp/run-view.test.ts): kept as a literal so the stdio adapter needs no ext-apps peer for one string.
 */
export const RESOURCE_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * Results as an MCP App (docs/mcp.md, "MCP Apps"): every flow tool links the UI resource
 * `ui://flowctl/run-view.html` (tool `_meta.ui.resourceUri`), a small self-contained HTML app
 * (run-view-app.ts) that a host supporting MCP Apps shows in a sandboxed iframe with the call's result.
 * What it shows rides in the result's `_meta["flowctl/run_view"]`: the run's status, its step timeline
 * from the journal, and the last screenshot the run stored (screenshots are masked when they are
 * taken: no unmasked pixel is ever stored), inlined as base64 so the app needs no URL and no
 * credentials. `content` and `structuredContent` stay what they were: clients without MCP Apps get
 * the plain result.
 */

/** One step of the timeline: the step's last journal entry wins. */
export interface RunViewStep {
  id: string;
  status: 'running' | 'succeeded' | 'failed' | 'skipped';
  tool?: string;
  duration_ms?: number;
  error?: { code: string; message: string };
}

export interface RunView {
  run_id: string;
  flow: string;
  status: string;
  steps: RunViewStep[];
  error?: { code: string; message: string; step?: string };
  screenshot?: { step: string; media_type: string; data: string };
  /** Why a stored screenshot is not inlined (too large). */
  screenshot_omitted?: string;
}

/** Screenshots larger than this are left out of results (a JPEG of a page is about 65 KB). */
export const MAX_VIEW_SCREENSHOT_BYTES = 1_048_576;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

export type ArtifactReader = (digest: Digest) => Promise<{ bytes: Uint8Array; mediaType: string } | undefined>;

/** The view of a finished (or failed) run, from its journal and the artifact store. */
export async function runView(flow: string, run: { id: string; status: string; journal: Run['journal'] }, getArtifact?: ArtifactReader): Promise<RunView> {
  const steps = new Map<string, RunViewStep>();
  let shot: { step: string; digest: Digest } | undefined;
  let error: RunView['error'];
  for (const e of run.journal) {
    if (e.event === 'step_started') steps.set(e.step, { id: e.step, status: 'running', tool: e.tool.ref });
    else if (e.event === 'step_succeeded') {
      const s = steps.get(e.step) ?? { id: e.step, status: 'succeeded' };
      steps.set(e.step, { ...s, status: 'succeeded', ...(e.duration_ms !== undefined ? { duration_ms: e.duration_ms } : {}) });
      const last = e.artifacts?.at(-1);
      if (last) shot = { step: e.step, digest: last };
    } else if (e.event === 'step_failed') {
      const s = steps.get(e.step) ?? { id: e.step, status: 'failed' };
      steps.set(e.step, {
        ...s,
        status: e.will_retry ? 'running' : 'failed',
        ...(e.duration_ms !== undefined ? { duration_ms: e.duration_ms } : {}),
        error: { code: e.error.code, message: e.error.message },
      });
    } else if (e.event === 'step_skipped') steps.set(e.step, { id: e.step, status: 'skipped' });
    else if (e.event === 'run_finished' && e.error) {
      error = { code: e.error.code, message: e.error.message, ...(e.error.step !== undefined ? { step: e.error.step } : {}) };
    }
  }
  const view: RunView = { run_id: run.id, flow, status: run.status, steps: [...steps.values()], ...(error ? { error } : {}) };
  if (shot && getArtifact) {
    const artifact = await getArtifact(shot.digest).catch(() => undefined);
    if (artifact && IMAGE_TYPES.has(artifact.mediaType)) {
      if (artifact.bytes.byteLength > MAX_VIEW_SCREENSHOT_BYTES) view.screenshot_omitted = `larger than ${MAX_VIEW_SCREENSHOT_BYTES} bytes`;
      else view.screenshot = { step: shot.step, media_type: artifact.mediaType, data: Buffer.from(artifact.bytes).toString('base64') };
    }
  }
  return view;
}

/** The view of a call that was queued (queue dispatch): no step has run yet. */
export function queuedView(flow: string, runId: string): RunView {
  return { run_id: runId, flow, status: 'queued', steps: [] };
}

/** `result` with the run view added to its `_meta`. */
export function withRunView<R extends { _meta?: Record<string, unknown> }>(result: R, view: RunView): R {
  return { ...result, _meta: { ...(result._meta ?? {}), [META.runView]: view } };
}

/** The `resources/list` entry of the run view. */
export const RUN_VIEW_RESOURCE = {
  uri: RUN_VIEW_URI,
  name: 'run-view',
  title: 'flowctl run',
  description: 'A run of a flowctl tool: its status, step timeline, last screenshot (secrets blacked out) and output (MCP Apps).',
  mimeType: RESOURCE_MIME_TYPE,
};

/**
 * The `resources/read` result for `uri`, or undefined when it is not a resource of this server. The app
 * loads nothing from the network (`csp` lists no domain) and asks for no permission.
 */
export function readRunViewResource(uri: string) {
  if (uri !== RUN_VIEW_URI) return undefined;
  return {
    contents: [
      {
        uri: RUN_VIEW_URI,
        mimeType: RESOURCE_MIME_TYPE,
        text: RUN_VIEW_HTML,
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
      },
    ],
  };
}
