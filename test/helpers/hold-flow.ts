/**
 * A pure flow that asks a loopback endpoint the test answers when it chooses (`inputs.url`), then
 * greets run `inputs.n`: a run held in flight for as long as a test needs (crash and chaos tests).
 * `timeoutMs` caps the request step.
 */
export function holdFlow(timeoutMs: number): string {
  return `
name: hold
description: Ask a loopback endpoint that answers when the test lets it, then greet.
inputs:
  url: {type: string}
  n: {type: integer}
steps:
  - id: ask
    tool: http/request@1
    args:
      url: \${inputs.url}
      expect_status: [200]
    timeout_ms: ${timeoutMs}
  - id: greet
    tool: core/template@1
    args:
      template: "run {{ n }} done"
      values:
        n: \${inputs.n}
output:
  text: \${steps.greet.output.text}
`;
}
