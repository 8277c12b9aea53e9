import { FlowError, prefixed } from '../errors.js';
import { compile, compileFlow, type CompileResult } from '../flow/compile.js';
import type { CompiledFlow } from '../flow/types.js';
import { parseRecording } from '../record/recording-schema.js';
import { recordingToFlow } from '../record/to-flow.js';
import type { ToolRegistry } from '../tools/types.js';
import { flowSpecBody } from './flowspec-body.js';
import type { DraftFlow } from './types.js';

function settled(result: CompileResult, file: string): CompiledFlow {
  if (result.ok) return { spec: result.spec, flow_digest: result.flow_digest };
  const first = result.diagnostics.find((d) => d.severity === 'error') ?? result.diagnostics[0];
  const where = first ? `${first.file}:${first.line}:${first.column}: ${first.code}: ${first.message}` : file;
  throw new FlowError('compile_failed', prefixed('packs', `${file} does not compile: ${where}`), { data: { diagnostics: result.diagnostics } });
}

/**
 * Compile one draft flow from its snapshot: Flow YAML with the flowctl compiler, a Recording through
 * recordingToFlow and the compiler, a FlowSpec as is (pins checked). Tools resolve to their highest
 * matching version in `tools` (a pack carries FlowSpecs, so the project's flowctl.lock does not apply).
 */
export function compileDraftFlow(flow: DraftFlow, tools: ToolRegistry): CompiledFlow {
  switch (flow.source_kind) {
    case 'yaml':
      return settled(compile(flow.source, { file: flow.file, tools }), flow.file);
    case 'recording': {
      let json: unknown;
      try {
        json = JSON.parse(flow.source);
      } catch (err) {
        throw new FlowError('pack_body_invalid', prefixed('packs', `${flow.file} is not JSON: ${(err as Error).message}`));
      }
      return settled(compileFlow(recordingToFlow(parseRecording(json, flow.file)), { file: flow.file, tools }), flow.file);
    }
    case 'flowspec':
      return flowSpecBody(flow.source, flow.file, tools);
  }
}
