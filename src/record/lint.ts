import { hasExpression } from '../flow/expr.js';
import type { LintRule } from '../flow/lint.js';
import type { Diagnostic } from '../flow/types.js';
import { describeStrategy, strategiesOf, type Locator, type LocatorStrategy } from './locator.js';

/**
 * Brittle-locator findings (style, never errors): locators that break on the next deploy of a page.
 * - deep positional CSS: two or more positional pseudo-classes (`:nth-child`, `:nth-of-type`, ...), one
 *   positional pseudo-class in a chain of three or more compounds, or a chain of five or more compounds;
 * - generated ids: `#ember123`, React's `:r1:`, ids with a run of 8+ hex characters that has a digit
 *   (hashes), framework prefixes with counters (`mui-123`, `radix-:r2:`, `ext-gen12`, `yui_3_1`);
 * - absolute XPath: starting at the document root (`/html/...`, `/body/...`, any `/x` not `//`).
 */

export interface BrittleFinding {
  code: 'brittle-locator';
  /** Which rule fired: `positional-css`, `generated-id` or `absolute-xpath`. */
  reason: 'positional-css' | 'generated-id' | 'absolute-xpath';
  locator: string;
  message: string;
}

const POSITIONAL = /:(nth-child|nth-last-child|nth-of-type|nth-last-of-type|first-child|last-child|first-of-type|last-of-type|eq|nth)\b/g;
const GENERATED_ID_RULES: RegExp[] = [
  /^ember\d+$/i,
  /^:r[0-9a-z]*:$/, // React useId
  /^(mui|radix|headlessui-[a-z-]+|ext-gen|yui_|gwt-uid-|react-select-\d+)[-_:]?.*\d/i,
  /\d{5,}/,
];

function isGeneratedId(id: string): boolean {
  if (GENERATED_ID_RULES.some((re) => re.test(id))) return true;
  // A hex run counts only when it holds a digit: "deadbeefcafe" is a word, "a3f9c2e1" is a hash.
  return [...id.matchAll(/[0-9a-f]{8,}/gi)].some((m) => /\d/.test(m[0]));
}

/** The ids a CSS selector names: `#id` (with CSS escapes undone) and `[id="..."]`. */
export function cssIds(css: string): string[] {
  const ids: string[] = [];
  for (const m of css.matchAll(/#((?:\\.|[\w-])+)/g)) ids.push(m[1]!.replace(/\\(.)/g, '$1'));
  for (const m of css.matchAll(/\[\s*id\s*[~|^$*]?=\s*(?:"([^"]*)"|'([^']*)'|([^\]\s]+))\s*\]/g)) ids.push(m[1] ?? m[2] ?? m[3]!);
  return ids;
}

function compoundCount(css: string): number {
  // Compounds are separated by combinators (space, >, +, ~) outside brackets and parentheses.
  let depth = 0;
  let count = 1;
  let prevSep = false;
  for (const ch of css.trim()) {
    if (ch === '[' || ch === '(') depth++;
    else if (ch === ']' || ch === ')') depth--;
    if (depth === 0 && /[\s>+~]/.test(ch)) {
      if (!prevSep) count++;
      prevSep = true;
    } else prevSep = false;
  }
  return count;
}

function checkStrategy(s: LocatorStrategy): BrittleFinding[] {
  const out: BrittleFinding[] = [];
  const locator = describeStrategy(s);
  const add = (reason: BrittleFinding['reason'], message: string) => out.push({ code: 'brittle-locator', reason, locator, message });
  if (s.css !== undefined) {
    // Selector lists: judge each alternative.
    for (const part of s.css.split(',')) {
      const positional = [...part.matchAll(POSITIONAL)].length;
      const depth = compoundCount(part);
      if (positional >= 2 || (positional >= 1 && depth >= 3) || depth >= 5) {
        add(
          'positional-css',
          `${locator} depends on the page's structure (${positional} positional pseudo-classes, ${depth} levels); prefer a testid, role or label`,
        );
        break;
      }
    }
    for (const id of cssIds(s.css)) {
      if (isGeneratedId(id)) add('generated-id', `${locator} uses the generated id "${id}", which changes between builds or page loads`);
    }
  }
  if (s.xpath !== undefined) {
    const xp = s.xpath.trim().replace(/^\(+/, '');
    if (xp.startsWith('/') && !xp.startsWith('//'))
      add('absolute-xpath', `${locator} is an absolute XPath from the document root; any layout change breaks it`);
    for (const m of xp.matchAll(/@id\s*=\s*["']([^"']*)["']/g)) {
      if (isGeneratedId(m[1]!)) add('generated-id', `${locator} uses the generated id "${m[1]}", which changes between builds or page loads`);
    }
  }
  return out;
}

/** Brittle-locator findings for one target (primary and fallbacks). */
export function brittleLocatorFindings(target: Locator | string): BrittleFinding[] {
  const locator: Locator = typeof target === 'string' ? { css: target } : target;
  return strategiesOf(locator).flatMap(checkStrategy);
}

/** Brittle-locator findings as a lint rule over any flow's browser steps (Recordings and YAML alike). */
export const brittleLocatorRule: LintRule = {
  name: 'brittle-locator',
  check(ctx) {
    const out: Diagnostic[] = [];
    const fromRecording = ctx.source?.kind === 'recording';
    ctx.flow.steps.forEach((step, i) => {
      if (!step.tool.startsWith('browser/')) return;
      // Every locator of the step: its target (and a drag's source), and the iframes it lives in.
      const places: { path: (string | number)[]; value: unknown }[] = [];
      for (const key of ['source', 'target', 'container'] as const) places.push({ path: [key], value: step.args?.[key] });
      const frame = step.args?.frame;
      if (Array.isArray(frame)) frame.forEach((f, j) => places.push({ path: ['frame', j], value: f }));
      else places.push({ path: ['frame'], value: frame });
      for (const { path, value } of places) {
        // A target computed by an expression is only known at run time.
        if (typeof value === 'string' ? hasExpression(value) : value === null || typeof value !== 'object' || Array.isArray(value)) continue;
        for (const f of brittleLocatorFindings(value as Locator | string)) {
          const { line, column } = ctx.locate(['steps', i, 'args', ...path]);
          const suffix = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
          const field = fromRecording ? `ops[${i}]${suffix}` : `steps[${i}].args${suffix}`;
          out.push({ severity: 'warning', code: f.code, message: f.message, file: ctx.file, line, column, field });
        }
      }
    });
    return out;
  },
};

/** Browser tools whose step may be `optional` (an action on a target). */
const OPTIONAL_TOOLS = new Set(['click', 'fill', 'select', 'drag', 'upload', 'press', 'hover', 'check', 'uncheck']);

/**
 * Recording semantics (docs/recordings.md, "Lists" and "Optional steps"), as warnings:
 * - `list-without-container`: an `extract` with `all: true` and no `container`: a list that is empty
 *   on some runs (a search with no hits) fails `locator_drift`, since nothing tells it from a changed page;
 * - `optional-without-effect`: `optional: true` on a step that is not a browser action with a target
 *   (navigate, extract, wait, switch, a non-browser tool): nothing ever skips it.
 */
export const browserSemanticsRule: LintRule = {
  name: 'browser-semantics',
  check(ctx) {
    const out: Diagnostic[] = [];
    const fromRecording = ctx.source?.kind === 'recording';
    ctx.flow.steps.forEach((step, i) => {
      const kind = step.tool.startsWith('browser/') ? step.tool.slice('browser/'.length).split('@')[0]! : undefined;
      const where = (path: (string | number)[], field: string) => ({
        ...ctx.locate(['steps', i, ...path]),
        field: fromRecording ? `ops[${i}].${field}` : `steps[${i}].${path.join('.')}`,
      });
      if (kind === 'extract' && step.args?.all === true && step.args.container === undefined) {
        const { line, column, field } = where(['args', 'all'], 'all');
        out.push({
          severity: 'warning',
          code: 'list-without-container',
          message:
            'extract with all: true has no container: a run that finds no item fails locator_drift; name the element holding the list (container) so an empty list is []',
          file: ctx.file,
          line,
          column,
          field,
        });
      }
      if (step.optional === true && !(kind !== undefined && OPTIONAL_TOOLS.has(kind) && step.args?.target !== undefined)) {
        const { line, column, field } = where(['optional'], 'optional');
        out.push({
          severity: 'warning',
          code: 'optional-without-effect',
          message: `optional has no effect on ${kind ? `browser/${kind}` : step.tool}: only a browser action with a target is skipped when its target is absent`,
          file: ctx.file,
          line,
          column,
          field,
        });
      }
    });
    return out;
  },
};
