import { contractDigest } from '../../src/tools/contract.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createRunScope } from '../../src/tools/run-scope.js';
import { isFlowError } from '../../src/errors.js';
import type { ToolContext } from '../../src/tools/types.js';
import { WORKER_ENV_MARK, type CallMessage, type FromWorker, type SerializedError, type ToWorker } from './protocol.js';

/**
 * The subprocess sandbox's worker: a Node process forked per tool call. It receives one `call`, runs the
 * built-in tool of that ref and version with ctx.cwd = the sandbox root, streams effects, warnings and
 * logs back, answers with the result and exits. Only built-in tools run here: their code ships with
 * the package, so the worker can load them by ref.
 */
const send = (message: FromWorker): void => {
  process.send?.(message);
};

function serialize(err: unknown): SerializedError {
  if (isFlowError(err)) return { code: err.code, message: err.message, data: err.data };
  const e = err as NodeJS.ErrnoException;
  // The permission model refused a file or process access the tool attempted.
  if (e?.code === 'ERR_ACCESS_DENIED') {
    return { code: 'sandbox_denied', message: `[flowctl] [sandbox-subprocess] access denied: ${e.message}`, data: { retryable: false } };
  }
  return { code: 'tool_error', message: `[flowctl] [sandbox-subprocess] ${e?.message ?? String(err)}`, data: { retryable: false } };
}

async function handle(call: CallMessage, controller: AbortController): Promise<FromWorker> {
  const tool = builtinTools().find((t) => t.contract.ref === call.ref && t.contract.version === call.version);
  if (!tool || contractDigest(tool.contract) !== call.contract_digest) {
    return {
      type: 'result',
      ok: false,
      error: {
        code: 'sandbox_unsupported_tool',
        message: `[flowctl] [sandbox-subprocess] ${call.ref}@${call.version} is not a built-in tool with this contract; the subprocess sandbox runs built-in tools only`,
        data: { retryable: false, ref: call.ref, version: call.version },
      },
    };
  }
  const scope = createRunScope();
  const ctx: ToolContext = {
    ...call.ctx,
    signal: controller.signal,
    effect: (effect) => send({ type: 'effect', effect }),
    warn: (warning) => send({ type: 'warning', warning }),
    scope,
    logger: {
      debug: (message, data) => send({ type: 'log', level: 'debug', message, data }),
      info: (message, data) => send({ type: 'log', level: 'info', message, data }),
      warn: (message, data) => send({ type: 'log', level: 'warn', message, data }),
    },
  };
  try {
    return { type: 'result', ok: true, output: await tool.run(call.input, ctx) };
  } catch (err) {
    return { type: 'result', ok: false, error: serialize(err) };
  } finally {
    await scope.dispose().catch(() => undefined);
  }
}

function start(): void {
  const controller = new AbortController();
  let started = false;
  process.on('message', (message: ToWorker) => {
    if (message.type === 'abort') {
      controller.abort();
      return;
    }
    if (message.type !== 'call' || started) return;
    started = true;
    void handle(message, controller).then((result) => {
      process.send?.(result, () => process.disconnect());
    });
  });
  // The parent went away: nothing left to answer to.
  process.on('disconnect', () => controller.abort());
  send({ type: 'ready' });
}

if (process.send && process.env[WORKER_ENV_MARK] === '1') start();
