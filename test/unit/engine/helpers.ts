import type { Digest } from '../../../src/canonical.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { createFixedClock, createSequentialIds } from '../../../src/engine/deterministic.js';
import type { EngineOptions } from '../../../src/engine/types.js';
import { FlowError } from '../../../src/errors.js';
import type { FlowSpec, InputContract, StepSpec } from '../../../src/flow/types.js';
import type { Logger } from '../../../src/ports/clock.js';
import { contractDigest, defineTool, toolError } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import type { Capability, Tool, ToolContract, ToolRegistry } from '../../../src/tools/types.js';

/** A minimal tool contract (object in, object out, no capabilities) for a test tool named `ref`. */
export function objectContract(ref: string): ToolContract {
  return { ref, version: '1.0.0', description: ref, input_schema: { type: 'object' }, output_schema: { type: 'object' }, capabilities: [] };
}

/** Small real tools for engine tests; `calls` counts executions so tests can prove none ran. */
export function testTools() {
  const calls: Record<string, number> = {};
  const count = (ref: string) => (calls[ref] = (calls[ref] ?? 0) + 1);
  const contract = (ref: string, capabilities: Capability[] = [], output_schema: Record<string, unknown> = { type: 'object' }): ToolContract => ({
    ref,
    version: '1.0.0',
    description: `test tool ${ref}`,
    input_schema: { type: 'object' },
    output_schema,
    capabilities,
  });
  const failures = new Map<string, number>();
  const aborted: unknown[] = [];
  const tools: Tool[] = [
    defineTool(contract('test/echo'), async (input: Record<string, unknown>) => {
      count('test/echo');
      return { ...input };
    }),
    // Fails `times` times per key with a retryable FlowError, then echoes.
    defineTool(contract('test/flaky'), async (input: { key: string; times: number; message?: string }) => {
      count('test/flaky');
      const seen = failures.get(input.key) ?? 0;
      if (seen < input.times) {
        failures.set(input.key, seen + 1);
        throw toolError('flaky', input.message ?? `flaky failure ${seen + 1} for ${input.key}`, { retryable: true });
      }
      return { key: input.key, failures: seen };
    }),
    defineTool(contract('test/throw'), async (input: { message: string }) => {
      count('test/throw');
      throw new Error(input.message);
    }),
    // Waits for `ms`, or until aborted when `honour_signal`.
    defineTool(contract('test/slow'), async (input: { ms: number; honour_signal?: boolean }, ctx) => {
      count('test/slow');
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, input.ms);
        if (input.honour_signal) ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)), { once: true });
      });
      return { waited: input.ms };
    }),
    // Never settles on its own: only the engine's step timeout (or a cancel) ends it, whatever the
    // machine's speed. With `honour_signal` it records the abort it saw, then rejects with its reason.
    defineTool(contract('test/hang'), async (input: { honour_signal?: boolean }, ctx) => {
      count('test/hang');
      await new Promise<void>((_resolve, reject) => {
        if (input.honour_signal) {
          ctx.signal.addEventListener('abort', () => (aborted.push(ctx.signal.reason), reject(ctx.signal.reason)), { once: true });
        }
      });
      return {};
    }),
    defineTool(contract('test/effects', ['net', 'fs']), async (input: { hosts: string[]; key?: string }, ctx) => {
      count('test/effects');
      for (const host of input.hosts) ctx.effect({ kind: 'net', target: host });
      if (input.key) ctx.effect({ kind: 'fs', target: 'out.txt', idempotency_key: input.key });
      ctx.warn({ code: 'drift', message: 'a locator drifted' });
      return { ok: true };
    }),
    // Sees the resolved secret: returns it (the engine must mask it) and its length (proves resolution).
    defineTool(contract('test/secret-echo', ['secrets']), async (input: { token: string; fail?: boolean }) => {
      count('test/secret-echo');
      if (input.fail) throw new Error(`upstream rejected token ${input.token}`);
      return { echoed: input.token, url: `https://api.example/?key=${input.token}`, length: input.token.length };
    }),
    defineTool(contract('test/scoped'), async (input: { key: string }, ctx) => {
      count('test/scoped');
      const value = await ctx.scope.get(
        input.key,
        async () => ({ opened: true }),
        () => {
          disposed.push(input.key);
        },
      );
      return { opened: value.opened };
    }),
  ];
  // Not built with defineTool, so only the engine checks its output against the contract.
  const badOutput: Tool = {
    contract: contract('test/bad-output', [], { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }),
    async run() {
      count('test/bad-output');
      return { n: 'not a number' };
    },
  };
  const disposed: string[] = [];
  return { registry: createToolRegistry([...tools, badOutput]), calls, disposed, aborted };
}

export interface StepDef {
  id: string;
  tool: string;
  args?: Record<string, unknown>;
  if?: string;
  retry?: Partial<StepSpec['retry']>;
  timeout_ms?: number;
  secrets?: boolean;
}

/** A FlowSpec over a registry (pins and capabilities from the tools' contracts), as compile would make. */
export function makeSpec(
  tools: ToolRegistry,
  steps: StepDef[],
  extra: { name?: string; inputs?: Record<string, Partial<InputContract> & { type: InputContract['type'] }>; output?: unknown } = {},
): FlowSpec {
  const inputs: Record<string, InputContract> = {};
  for (const [name, def] of Object.entries(extra.inputs ?? {})) {
    inputs[name] = {
      required: false,
      secret: false,
      schema: def.secret ? { type: 'string', pattern: '^secret:' } : { type: def.type === 'enum' ? 'string' : def.type },
      ...def,
    };
  }
  return {
    flowspec: 1,
    name: extra.name ?? 'test-flow',
    inputs,
    steps: steps.map((s): StepSpec => {
      const tool = tools.get(s.tool, '1.0.0');
      if (!tool) throw new FlowError('unknown_tool', `no ${s.tool}`);
      const capabilities = [...tool.contract.capabilities];
      if (s.secrets && !capabilities.includes('secrets')) capabilities.push('secrets');
      return {
        id: s.id,
        tool: { ref: s.tool, version: '1.0.0', contract_digest: contractDigest(tool.contract) as Digest },
        capabilities,
        args: s.args ?? {},
        ...(s.if ? { if: s.if } : {}),
        retry: { max_attempts: 1, backoff_ms: 10, backoff_factor: 2, ...s.retry },
        timeout_ms: s.timeout_ms ?? 5000,
      };
    }),
    ...(extra.output !== undefined ? { output: extra.output } : {}),
  };
}

export interface LogLine {
  level: string;
  message: string;
  data?: unknown;
}

export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (message: string, data?: unknown) => void lines.push({ level, message, data });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** An engine over memory storage with a fixed clock and sequential ids. */
export function testEngine(tools: ToolRegistry, options: Partial<EngineOptions> = {}) {
  const clock = createFixedClock();
  const storage = options.storage ?? createMemoryStorage();
  const engine = createEngine({ storage, tools, clock, ids: createSequentialIds(), ...options });
  return { engine, storage, clock };
}
