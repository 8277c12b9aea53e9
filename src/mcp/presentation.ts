/**
 * What an MCP client shows people and models about flowctl's servers: a tool's `title` (its display
 * name) and the server's `instructions` (sent in `initialize`; many clients put them in the model's
 * context), for the stdio server and the hosted endpoint alike (docs/mcp.md, "Tools").
 */

/**
 * A tool's display title from its name, which is a slug (`example-forecast`, `read_title`,
 * `invoice.v2`): separators become spaces and the first letter is capitalised (`Example forecast`).
 */
export function toolTitle(name: string): string {
  const words = name
    .replace(/[-_.]+/g, ' ')
    .trim()
    .replace(/\s+/g, ' ');
  if (words === '') return name;
  return words[0]!.toUpperCase() + words.slice(1);
}

/** The parts of the server instructions: where runs are seen, and what else the server offers. */
export interface InstructionsOptions {
  /** What each tool runs, e.g. `one flow of this project` or `one published automation of this organization`. */
  what: string;
  /** Where a call's run can be seen afterwards, e.g. `flowctl inspect <run_id>`. */
  runs: string;
  /** Sentences appended at the end (e.g. how queued calls are polled). */
  extra?: string;
}

/** The server `instructions`: what the tools are, what a call does and answers, and where its run is. */
export function serverInstructions(o: InstructionsOptions): string {
  return [
    `Each tool runs ${o.what}: a deterministic, recorded automation (no model takes part), pinned to the version tools/list announced (_meta "flowctl/flow_digest").`,
    'Call a tool with the inputs its inputSchema lists; secrets are resolved on the server and are never arguments. Tools whose annotations say destructiveHint or openWorldHint act on real sites or systems.',
    'A call answers the run\'s output as structuredContent, or isError with {"error": {"code", "message", ...}}: invalid_inputs (with every issue; nothing ran) or the failing step\'s code with run_id, status and step.',
    `Every call is a run; its id is the result's _meta "flowctl/run_id". ${o.runs}`,
    ...(o.extra ? [o.extra] : []),
  ].join('\n');
}
