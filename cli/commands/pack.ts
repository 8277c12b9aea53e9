import { readFile } from 'node:fs/promises';
import { basename, relative, resolve, sep } from 'node:path';
import { FlowError, prettyJson, type ToolRegistry } from '../../src/engine-entry.js';
import type { BuiltPack, PackDraft } from '../../src/packs-entry.js';
import { writeFileAtomic } from '../../src/util/atomic-write.js';
import { buildPack } from '../../src/packs/build.js';
import { compileDraftFlow } from '../../src/packs/compile-source.js';
import { classifyBody, DRAFT_FILE, newDraft, putDraftFlow, putDraftTool, readDraft, writeDraft } from '../../src/packs/draft.js';
import { fromExport, toExport } from '../../src/packs/export-file.js';
import { publishPack } from '../../src/packs/publish.js';
import { PACK_NAME_PATTERN } from '../../src/packs/types.js';
import { assertKnownFlags, flagBool, flagString, UsageError, type ParsedArgs } from '../args.js';
import { reportError } from '../cli-output.js';
import { EXIT, type CliIO } from '../io.js';
import { projectTools } from '../project.js';

/** Where `pack publish` writes when no --registry is given (the same local registry `install` fills). */
export const DEFAULT_REGISTRY = '.flowctl/registry';

const FLAGS: Record<string, readonly string[]> = {
  init: ['version', 'name', 'json'],
  add: ['body', 'json'],
  publish: ['registry', 'body', 'version', 'json'],
  export: ['to', 'version', 'json'],
  list: ['json'],
};

/**
 * The tools pack flows compile against: the runtime's (built-ins, plus the browser tools when a flow
 * or tool mentions them). Installed pack tools are left out on purpose: a pack builds on the runtime only.
 */
async function withRuntimeTools<T>(io: CliIO, sources: { source: string }[], refs: string[], fn: (tools: ToolRegistry) => Promise<T>): Promise<T> {
  const browser = refs.some((r) => r.startsWith('browser/')) || sources.some((f) => f.source.includes('browser/') || f.source.includes('flowctl-recording/'));
  const tools = await projectTools({ cwd: io.cwd, browser, registryDir: '' });
  try {
    return await fn(tools.registry);
  } finally {
    await tools.dispose();
  }
}

function projectPath(io: CliIO, path: string): string {
  return resolve(io.cwd, path);
}

function displayPath(io: CliIO, path: string): string {
  const rel = relative(io.cwd, path);
  return rel.split(sep).join('/');
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new FlowError('file_not_found', `[flowctl] [packs] cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The draft with an optional `--version` override for this publish or export (the draft file is unchanged). */
async function draftFor(io: CliIO, args: ParsedArgs): Promise<PackDraft> {
  const draft = await readDraft(projectPath(io, DRAFT_FILE));
  const version = flagString(args, 'version');
  return version === undefined ? draft : { ...draft, version: newDraft(draft.name, version).version };
}

function build(io: CliIO, draft: PackDraft): Promise<BuiltPack> {
  return withRuntimeTools(
    io,
    draft.flows,
    draft.tools.map((t) => t.ref),
    (tools) => buildPack(draft, { tools, compileFlow: compileDraftFlow }),
  );
}

async function init(args: ParsedArgs, io: CliIO): Promise<number> {
  const file = projectPath(io, DRAFT_FILE);
  const fallback = basename(io.cwd)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  // The name: `pack init <name>` or `pack init --name <name>` (a value flag of the spec), else the folder's.
  const flagName = flagString(args, 'name');
  if (flagName !== undefined && args.positionals[1] !== undefined && flagName !== args.positionals[1]) {
    throw new UsageError(`pack init got two names ("${args.positionals[1]}" and --name "${flagName}")`);
  }
  const name = args.positionals[1] ?? flagName ?? fallback;
  if (args.positionals.length > 2) throw new UsageError('pack init takes one name');
  if (!PACK_NAME_PATTERN.test(name))
    throw new UsageError(`pack name "${name}" is invalid: use lowercase letters, digits, ".", "_" or "-" (flowctl pack init <name>)`);
  const draft = newDraft(name, flagString(args, 'version') ?? '0.0.0');
  const existing = await readDraft(file).catch((err: unknown) =>
    err instanceof FlowError && err.code === 'pack_draft_not_found' ? undefined : Promise.reject(err),
  );
  if (existing) {
    const versionGiven = args.flags.version !== undefined;
    if (existing.name !== draft.name || (versionGiven && existing.version !== draft.version)) {
      throw new FlowError(
        'pack_draft_exists',
        `[flowctl] [packs] ${DRAFT_FILE} already defines ${existing.name}@${existing.version}; edit it or remove it first`,
      );
    }
    io.stderr.write(`${DRAFT_FILE} already defines ${existing.name}@${existing.version}; nothing to do\n`);
  } else {
    await writeDraft(file, draft);
    io.stderr.write(`wrote ${DRAFT_FILE} for ${draft.name}@${draft.version}\n`);
  }
  const current = existing ?? draft;
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson({ name: current.name, version: current.version, created: !existing })}\n`);
  return EXIT.ok;
}

async function add(args: ParsedArgs, io: CliIO): Promise<number> {
  const given = flagString(args, 'body') ?? args.positionals[1];
  if (!given) throw new UsageError('pack add needs --body <path> (a flow .yaml, a Recording, a FlowSpec or a tool contract .json)');
  const file = projectPath(io, DRAFT_FILE);
  const draft = await readDraft(file);
  const path = projectPath(io, given);
  const text = await readText(path, 'body');
  const shown = displayPath(io, path);
  const body = classifyBody(shown, text);
  let result: Record<string, unknown>;
  if (body.kind === 'export') {
    throw new FlowError('pack_body_unknown', `[flowctl] [packs] ${shown} is an exported pack; import it with "flowctl pack publish --body ${shown}"`);
  } else if (body.kind === 'tool') {
    const replaced = putDraftTool(draft, body.tool);
    result = { kind: 'tool', ref: body.tool.ref, version: body.tool.version, replaced };
    io.stderr.write(
      `${replaced ? 'replaced' : 'added'} tool ${body.tool.ref}@${body.tool.version}${body.tool.implementation ? ` (implemented by flow "${body.tool.implementation.flow}")` : ''}\n`,
    );
  } else {
    // Compile now so a broken flow is refused at add time, not at publish time.
    const entry = { name: '', file: shown, source_kind: body.source_kind, source: text };
    const compiled = await withRuntimeTools(io, [entry], [], async (tools) => compileDraftFlow(entry, tools));
    const replaced = putDraftFlow(draft, { name: compiled.spec.name, file: shown, source_kind: body.source_kind, source: text });
    result = { kind: 'flow', name: compiled.spec.name, flow_digest: compiled.flow_digest, replaced };
    io.stderr.write(`${replaced ? 'replaced' : 'added'} flow ${compiled.spec.name} (${compiled.flow_digest}) from ${shown}\n`);
  }
  await writeDraft(file, draft);
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson(result)}\n`);
  return EXIT.ok;
}

async function publish(args: ParsedArgs, io: CliIO): Promise<number> {
  const from = flagString(args, 'body');
  let pack: BuiltPack;
  if (from !== undefined) {
    if (args.flags.version !== undefined) throw new UsageError('--version cannot change an exported pack (its version is part of its digest)');
    pack = fromExport(await readText(projectPath(io, from), 'export file'), from);
  } else {
    pack = await build(io, await draftFor(io, args));
  }
  const registry = projectPath(io, flagString(args, 'registry') ?? DEFAULT_REGISTRY);
  const result = await publishPack(registry, pack);
  io.stderr.write(
    `${result.alreadyPresent ? 'already present' : 'published'}: ${result.name}@${result.version} ${result.digest} in ${displayPath(io, registry) || '.'}\n`,
  );
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson(result)}\n`);
  return EXIT.ok;
}

async function exportPack(args: ParsedArgs, io: CliIO): Promise<number> {
  const to = flagString(args, 'to');
  if (!to) throw new UsageError('pack export needs --to <file>');
  const pack = await build(io, await draftFor(io, args));
  const path = projectPath(io, to);
  await writeFileAtomic(path, `${prettyJson(toExport(pack))}\n`);
  io.stderr.write(`exported ${pack.manifest.name}@${pack.manifest.version} ${pack.digest} to ${displayPath(io, path)}\n`);
  if (flagBool(args, 'json')) {
    io.stdout.write(`${prettyJson({ name: pack.manifest.name, version: pack.manifest.version, digest: pack.digest, file: displayPath(io, path) })}\n`);
  }
  return EXIT.ok;
}

async function list(args: ParsedArgs, io: CliIO): Promise<number> {
  const draft = await readDraft(projectPath(io, DRAFT_FILE));
  const pack = await build(io, draft);
  const summary = {
    name: draft.name,
    version: draft.version,
    digest: pack.digest,
    flows: pack.manifest.flows.map((f) => ({
      name: f.name,
      flow_digest: f.flow_digest,
      source_kind: f.source_kind,
      file: draft.flows.find((d) => d.name === f.name)!.file,
    })),
    tools: pack.manifest.tools.map((t) => ({ ref: t.ref, version: t.version, contract_digest: t.contract_digest, implementation: t.implementation })),
  };
  io.stderr.write(`${draft.name}@${draft.version} ${pack.digest}\n`);
  for (const f of summary.flows) io.stderr.write(`  flow ${f.name} ${f.flow_digest} (${f.file})\n`);
  for (const t of summary.tools)
    io.stderr.write(`  tool ${t.ref}@${t.version} ${t.contract_digest}${t.implementation ? ` -> flow ${t.implementation.flow}` : ' (runtime)'}\n`);
  if (!summary.flows.length && !summary.tools.length) io.stderr.write('  (empty: add flows and tools with "flowctl pack add --body <path>")\n');
  if (flagBool(args, 'json')) io.stdout.write(`${prettyJson(summary)}\n`);
  return EXIT.ok;
}

const SUBCOMMANDS: Record<string, (args: ParsedArgs, io: CliIO) => Promise<number>> = { init, add, publish, export: exportPack, list };

/** `flowctl pack init|add|publish|export|list`: see docs/packs.md. */
export default async function pack(args: ParsedArgs, io: CliIO): Promise<number> {
  const sub = args.positionals[0];
  const run = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!sub || !run) throw new UsageError(`pack needs a subcommand: init, add, publish, export or list${sub ? ` (got "${sub}")` : ''}`);
  assertKnownFlags(args, `pack ${sub}`, FLAGS[sub]!);
  if (sub !== 'init' && sub !== 'add' && args.positionals.length > 1) throw new UsageError(`pack ${sub} takes no positional arguments`);
  try {
    return await run(args, io);
  } catch (err) {
    return reportError(io, err, { json: flagBool(args, 'json'), command: `pack ${sub}` });
  }
}
