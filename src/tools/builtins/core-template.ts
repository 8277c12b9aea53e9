import { canonicalJson } from '../../canonical.js';
import { defineTool, toolError } from '../contract.js';

/**
 * `core/template`: render `{{ path }}` placeholders from `values`. Its own placeholder syntax keeps it
 * apart from the flow language's `${ expr }`, which the runner has already evaluated in the arguments.
 *
 * - `path` is a dotted path with optional indices: `user.name`, `items[0].id`.
 * - `{{ "text" }}` inserts a JSON string literal (the way to write a literal `{{`).
 * - Rendering: strings as they are, numbers and booleans with String(), null as the empty string,
 *   objects and arrays as canonical JSON.
 * - A missing value is an error (`template_missing_value`), so is a malformed placeholder (`template_syntax`).
 */
const PLACEHOLDER = /\{\{(.*?)\}\}/gs;
const PATH = /^[A-Za-z_$][\w$-]*(?:\.[A-Za-z_$][\w$-]*|\[\d+\])*$/;

function lookup(values: unknown, path: string): { found: boolean; value?: unknown } {
  let current: unknown = values;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return { found: false };
    current = (current as Record<string, unknown>)[part];
  }
  return { found: true, value: current };
}

function render(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return canonicalJson(value);
}

export function renderTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_match, rawInner: string) => {
    const inner = rawInner.trim();
    if (inner.startsWith('"')) {
      try {
        const literal: unknown = JSON.parse(inner);
        if (typeof literal === 'string') return literal;
      } catch {
        // falls through to the syntax error below
      }
    } else if (PATH.test(inner)) {
      const hit = lookup(values, inner);
      if (!hit.found) {
        throw toolError('template_missing_value', `[flowctl] [core/template] no value for {{ ${inner} }}`, {
          retryable: false,
          data: { path: inner },
        });
      }
      return render(hit.value);
    }
    throw toolError('template_syntax', `[flowctl] [core/template] malformed placeholder {{${rawInner}}}`, {
      retryable: false,
      data: { placeholder: rawInner },
    });
  });
}

export const coreTemplate = defineTool<{ template: string; values?: Record<string, unknown> }, { text: string }>(
  {
    ref: 'core/template',
    version: '1.0.0',
    description: 'Render a text template: {{ path }} placeholders are replaced from `values`.',
    input_schema: {
      type: 'object',
      properties: {
        template: { type: 'string', description: 'Text with {{ path }} placeholders.' },
        values: { type: 'object', description: 'The values placeholders refer to.' },
      },
      required: ['template'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    capabilities: [],
  },
  async (input) => ({ text: renderTemplate(input.template, input.values ?? {}) }),
);
