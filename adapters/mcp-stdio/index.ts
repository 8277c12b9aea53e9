import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * flowctl/adapters/mcp-stdio: serve an MCP server (src/mcp/server.ts, createMcpServer) over stdio
 * with the SDK's StdioServerTransport. A thin shim: no product logic.
 */

export interface McpStdioOptions {
  /** Where protocol messages come from. Default `process.stdin`. */
  stdin?: NodeJS.ReadableStream;
  /** Where protocol messages go, and nothing else. Default `process.stdout`. Log to stderr. */
  stdout?: NodeJS.WritableStream;
}

export interface McpStdioHandle {
  /** Resolves when the session has ended: after the end of stdin, or after close(). */
  readonly closed: Promise<void>;
  /** Close now (idempotent); requests still running get no answer. */
  close(): Promise<void>;
}

type RequestId = string | number;

/**
 * Connect `server` to stdin/stdout. The SDK transport does not watch for the end of stdin; this shim
 * does. When the client closes our stdin, the requests already received are still answered (so
 * `cat requests.jsonl | flowctl mcp` gets every answer), then the session closes.
 */
export async function serveMcpStdio(server: Server, options: McpStdioOptions = {}): Promise<McpStdioHandle> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin as NodeJS.ReadStream, stdout as NodeJS.WriteStream);

  const pending = new Set<RequestId>();
  let onDrained: (() => void) | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= server.close().finally(() => resolveClosed());
    return closing;
  };

  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) {
      pending.delete(message.id);
      if (pending.size === 0) onDrained?.();
    }
  };
  server.onclose = () => resolveClosed();
  await server.connect(transport);
  const receive = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message && message.id !== undefined) pending.add(message.id);
    receive?.(message);
  };

  const onEnd = () => {
    stdin.off('end', onEnd);
    if (pending.size === 0) void close();
    else onDrained = () => void close();
  };
  stdin.on('end', onEnd);
  return { closed, close };
}
