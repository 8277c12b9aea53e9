import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { prettyJson } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import {
  DRAFT_FORMAT,
  draftSchema,
  draftToolSchema,
  EXPORT_FORMAT,
  PACK_NAME_PATTERN,
  PACK_VERSION_PATTERN,
  zodIssues,
  type DraftFlow,
  type DraftTool,
  type PackDraft,
  type SourceKind,
} from './types.js';

/** The draft file `pack` works on, relative to the project. */
export const DRAFT_FILE = 'flowctl.pack.json';

function bad(code: string, message: string, data?: unknown): FlowError {
  return new FlowError(code, prefixed('packs', message), data === undefined ? {} : { data });
}

export function newDraft(name: string, version = '0.0.0'): PackDraft {
  if (!PACK_NAME_PATTERN.test(name)) {
    throw bad('invalid_pack_name', `pack name "${name}" must be lowercase letters, digits, ".", "_" or "-" (max 100), starting with a letter or digit`);
  }
  if (!PACK_VERSION_PATTERN.test(version)) throw bad('invalid_pack_version', `pack version "${version}" must be MAJOR.MINOR.PATCH[-prerelease]`);
  return { format: DRAFT_FORMAT, name, version, flows: [], tools: [] };
}

export function parseDraft(text: string, file = DRAFT_FILE): PackDraft {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bad('pack_draft_invalid', `${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = draftSchema.safeParse(json);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    throw bad('pack_draft_invalid', `${file} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  return parsed.data as PackDraft;
}

export async function readDraft(path: string): Promise<PackDraft> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw bad('pack_draft_not_found', `no pack draft at ${path}; run "flowctl pack init <name>" first`, { file: path });
  }
  return parseDraft(text, path);
}

export async function writeDraft(path: string, draft: PackDraft): Promise<void> {
  await writeFileAtomic(path, `${prettyJson(draft)}\n`);
}

/** What a `--body` file is, decided from its extension and (for JSON) its shape. */
export type BodyKind = { kind: 'flow'; source_kind: SourceKind } | { kind: 'tool'; tool: DraftTool } | { kind: 'export' };

export function classifyBody(file: string, text: string): BodyKind {
  const ext = extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') return { kind: 'flow', source_kind: 'yaml' };
  if (ext !== '.json') throw bad('pack_body_unknown', `${file}: expected a flow (.yaml, .yml), a Recording, FlowSpec or tool contract (.json)`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bad('pack_body_unknown', `${file} is not JSON: ${(err as Error).message}`);
  }
  const obj = (json ?? {}) as Record<string, unknown>;
  if (obj.format === EXPORT_FORMAT) return { kind: 'export' };
  if (typeof obj.format === 'string' && obj.format.startsWith('flowctl-recording/')) return { kind: 'flow', source_kind: 'recording' };
  if (obj.flowspec === 1) return { kind: 'flow', source_kind: 'flowspec' };
  if (typeof obj.ref === 'string') {
    const parsed = draftToolSchema.safeParse(json);
    if (!parsed.success) {
      const issues = zodIssues(parsed.error);
      throw bad('pack_tool_invalid', `${file} is not a valid tool contract: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
    }
    return { kind: 'tool', tool: parsed.data as DraftTool };
  }
  throw bad('pack_body_unknown', `${file}: JSON that is neither a Recording, a FlowSpec nor a tool contract (no "format", "flowspec" or "ref")`);
}

/** Add or replace (same flow name) a flow; returns whether it replaced one. */
export function putDraftFlow(draft: PackDraft, flow: DraftFlow): boolean {
  const i = draft.flows.findIndex((f) => f.name === flow.name);
  if (i >= 0) draft.flows[i] = flow;
  else draft.flows.push(flow);
  draft.flows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return i >= 0;
}

/** Add or replace (same ref@version) a tool; returns whether it replaced one. */
export function putDraftTool(draft: PackDraft, tool: DraftTool): boolean {
  const i = draft.tools.findIndex((t) => t.ref === tool.ref && t.version === tool.version);
  if (i >= 0) draft.tools[i] = tool;
  else draft.tools.push(tool);
  draft.tools.sort((a, b) => `${a.ref}@${a.version}`.localeCompare(`${b.ref}@${b.version}`));
  return i >= 0;
}
