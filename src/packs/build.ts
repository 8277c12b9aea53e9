import { canonicalJson, digestBytes, digestOf, type Digest } from '../canonical.js';
import { FlowError, prefixed } from '../errors.js';
import type { CompiledFlow } from '../flow/types.js';
import type { ToolContract, ToolRegistry } from '../tools/types.js';
import { compositeContract } from './composite.js';
import { MANIFEST_FORMAT, packId, type BuiltPack, type DraftFlow, type PackDraft, type PackFlowEntry, type PackManifest, type PackToolEntry } from './types.js';

export interface BuildPackOptions {
  /** The runtime's tools: the pack's flows compile against them and provided-tool entries must equal them. */
  tools: ToolRegistry;
  /** Compiles one draft flow (the CLI passes the flowctl compiler; see src/packs/compile-source.ts). */
  compileFlow: (flow: DraftFlow, tools: ToolRegistry) => Promise<CompiledFlow> | CompiledFlow;
}

function bad(code: string, message: string, data?: unknown): FlowError {
  return new FlowError(code, prefixed('packs', message), data === undefined ? {} : { data });
}

function byRefVersion(a: PackToolEntry, b: PackToolEntry): number {
  return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

/**
 * Build a pack from a draft: compile every flow, settle every tool contract, and produce the
 * canonical manifest and every blob. Pure apart from the compiler: the same draft and runtime tools
 * always give the same digest.
 */
export async function buildPack(draft: PackDraft, options: BuildPackOptions): Promise<BuiltPack> {
  const id = packId(draft.name, draft.version);
  const blobs = new Map<Digest, string>();
  const put = (text: string): Digest => {
    const d = digestBytes(text);
    blobs.set(d, text);
    return d;
  };

  const specs = new Map<string, CompiledFlow>();
  const flows: PackFlowEntry[] = [];
  for (const flow of draft.flows) {
    if (specs.has(flow.name)) throw bad('pack_draft_invalid', `${id}: two flows are named "${flow.name}"`);
    const compiled = await options.compileFlow(flow, options.tools);
    if (compiled.spec.name !== flow.name) {
      throw bad('pack_draft_invalid', `${id}: flow entry "${flow.name}" compiles to a flow named "${compiled.spec.name}"`);
    }
    specs.set(flow.name, compiled);
    const specDigest = put(canonicalJson(compiled.spec));
    flows.push({ name: flow.name, flow_digest: specDigest, source: put(flow.source), source_kind: flow.source_kind });
  }

  const tools: PackToolEntry[] = [];
  const seen = new Set<string>();
  for (const tool of draft.tools) {
    const toolId = `${tool.ref}@${tool.version}`;
    if (seen.has(toolId)) throw bad('pack_draft_invalid', `${id}: tool ${toolId} is listed twice`);
    seen.add(toolId);
    const runtime = options.tools.get(tool.ref, tool.version);
    let contract: ToolContract;
    if (tool.implementation) {
      const impl = specs.get(tool.implementation.flow);
      if (!impl)
        throw bad('pack_tool_invalid', `${id}: tool ${toolId} is implemented by flow "${tool.implementation.flow}", which the pack lacks`, { tool: toolId });
      if (runtime)
        throw bad('pack_tool_invalid', `${id}: tool ${toolId} would shadow the runtime's own ${toolId}; pick another ref or version`, { tool: toolId });
      contract = compositeContract(tool, impl.spec);
    } else {
      if (!runtime) {
        throw bad(
          'pack_tool_invalid',
          `${id}: tool ${toolId} has no implementation and the runtime provides no such tool (add "implementation": {"flow": <name>})`,
          { tool: toolId },
        );
      }
      if (!tool.input_schema || !tool.output_schema || !tool.capabilities) {
        throw bad('pack_tool_invalid', `${id}: tool ${toolId} must give the full contract (input_schema, output_schema, capabilities)`, { tool: toolId });
      }
      contract = {
        ref: tool.ref,
        version: tool.version,
        description: tool.description,
        input_schema: tool.input_schema,
        output_schema: tool.output_schema,
        capabilities: tool.capabilities,
      };
      const expected = digestOf(runtime.contract);
      if (digestOf(contract) !== expected) {
        throw bad('pack_tool_mismatch', `${id}: contract of ${toolId} differs from the runtime's (expected ${expected}, actual ${digestOf(contract)})`, {
          tool: toolId,
          expected,
          actual: digestOf(contract),
        });
      }
    }
    const contractDigest = put(canonicalJson(contract));
    tools.push(
      tool.implementation
        ? { ref: tool.ref, version: tool.version, contract_digest: contractDigest, implementation: { flow: tool.implementation.flow } }
        : { ref: tool.ref, version: tool.version, contract_digest: contractDigest },
    );
  }

  const manifest: PackManifest = {
    format: MANIFEST_FORMAT,
    name: draft.name,
    version: draft.version,
    ...(draft.description ? { description: draft.description } : {}),
    tools: tools.sort(byRefVersion),
    flows: flows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
  const digest = put(canonicalJson(manifest));
  return { manifest, digest, blobs };
}
