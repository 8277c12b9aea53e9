import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Document, type Node } from 'yaml';
import { DiagnosticSink, type Locator, type PathSegment } from './diagnostics.js';

/**
 * YAML source of a Flow: parse with positions and answer "where is this field" for diagnostics.
 * YAML 1.2 core schema, unique keys, no merge keys; aliases are expanded with a small bound so a
 * hostile file cannot blow up (the "billion laughs" shape).
 */

export interface ParsedSource {
  /** The plain JS value of the document (undefined when the YAML did not parse). */
  value: unknown;
  locate: Locator;
  /** yaml_syntax diagnostics; empty when the document parsed. */
  sink: DiagnosticSink;
}

const MAX_ALIAS_COUNT = 100;

function lineColumn(counter: LineCounter, offset: number): { line: number; column: number } {
  const p = counter.linePos(offset);
  return { line: p.line, column: p.col };
}

function childOf(node: unknown, seg: PathSegment): { key?: Node; value?: Node } | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = pair.key;
      const kv = isScalar(k) ? k.value : k;
      if (kv === seg || (typeof seg === 'number' && kv === String(seg)) || String(kv) === seg) {
        return { key: k as Node, value: (pair.value ?? undefined) as Node | undefined };
      }
    }
    return undefined;
  }
  if (isSeq(node) && typeof seg === 'number') {
    const item = node.items[seg];
    return item === undefined ? undefined : { value: item as Node };
  }
  return undefined;
}

function nodeLocator(doc: Document, counter: LineCounter, text: string): Locator {
  return (path, options = {}) => {
    let node: Node | undefined = (doc.contents ?? undefined) as Node | undefined;
    let keyNode: Node | undefined;
    for (const seg of path) {
      const next = childOf(node, seg);
      // Missing on the way: point at the deepest node that exists (its key when we have one).
      if (!next) return lineColumn(counter, (keyNode ?? node)?.range?.[0] ?? 0);
      keyNode = next.key;
      if (next.value === undefined || next.value === null) {
        return lineColumn(counter, (next.key ?? node)?.range?.[0] ?? 0);
      }
      node = next.value;
    }
    if (options.key && keyNode?.range) return lineColumn(counter, keyNode.range[0]);
    const start = node?.range?.[0] ?? 0;
    if (options.offset !== undefined && isScalar(node) && node.range) {
      const raw = text.slice(node.range[0], node.range[1]);
      // Exact columns inside single-line plain and quoted scalars; block scalars point at their start.
      if (!raw.includes('\n')) {
        if (node.type === Scalar.PLAIN) return lineColumn(counter, start + options.offset);
        if (node.type === Scalar.QUOTE_SINGLE || node.type === Scalar.QUOTE_DOUBLE) {
          return lineColumn(counter, start + 1 + options.offset);
        }
      }
    }
    return lineColumn(counter, start);
  };
}

/** The yaml library reports an unclosed quote at the end of the input; point at the opening quote instead. */
function problemOffset(text: string, code: string, message: string, offset: number): number {
  const quote = code === 'MISSING_CHAR' ? /closing (["'])quote/.exec(message)?.[1] : undefined;
  if (!quote) return offset;
  const open = text.lastIndexOf(quote, offset - 1);
  return open >= 0 ? open : offset;
}

/** Parse Flow YAML. `file` is the name diagnostics carry (a project-relative path, never absolute). */
export function parseFlowSource(text: string, file: string): ParsedSource {
  const counter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: counter,
    prettyErrors: false,
    uniqueKeys: true,
    merge: false,
    schema: 'core',
    strict: true,
  });
  const locate = nodeLocator(doc, counter, text);
  const sink = new DiagnosticSink(file, locate);
  const problems = [...doc.errors, ...doc.warnings];
  for (const e of problems) {
    const { line, column } = lineColumn(counter, problemOffset(text, e.code, e.message, e.pos[0]));
    sink.list.push({
      severity: 'error',
      code: 'yaml_syntax',
      message: `YAML: ${e.message.split('\n')[0]}`,
      file,
      line,
      column,
    });
  }
  if (problems.length > 0) return { value: undefined, locate, sink };
  let value: unknown;
  try {
    value = toValue(doc.contents, doc, { aliases: 0 }, new Set());
  } catch (err) {
    const at = (err as { node?: Node }).node?.range?.[0] ?? 0;
    const { line, column } = lineColumn(counter, at);
    sink.list.push({ severity: 'error', code: 'yaml_syntax', message: `YAML: ${(err as Error).message}`, file, line, column });
    return { value: undefined, locate, sink };
  }
  return { value, locate, sink };
}

class YamlValueError extends Error {
  constructor(
    message: string,
    readonly node: Node,
  ) {
    super(message);
  }
}

/**
 * The plain value of a node. Cheaper than Document.toJS for large flows (no anchor bookkeeping per
 * node); aliases are expanded at most MAX_ALIAS_COUNT times and may not point into themselves.
 */
function toValue(node: unknown, doc: Document, budget: { aliases: number }, open: Set<unknown>): unknown {
  if (node === null || node === undefined) return null;
  if (isScalar(node)) return node.value;
  if (isAlias(node)) {
    if (++budget.aliases > MAX_ALIAS_COUNT) throw new YamlValueError(`more than ${MAX_ALIAS_COUNT} alias expansions`, node as Node);
    const target = node.resolve(doc);
    if (!target) throw new YamlValueError(`unresolved alias *${node.source}`, node as Node);
    if (open.has(target)) throw new YamlValueError(`alias *${node.source} refers to itself`, node as Node);
    return toValue(target, doc, budget, open);
  }
  if (isSeq(node)) {
    open.add(node);
    const out = node.items.map((item) => toValue(item, doc, budget, open));
    open.delete(node);
    return out;
  }
  if (isMap(node)) {
    open.add(node);
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const k = pair.key;
      if (k !== null && !isScalar(k)) throw new YamlValueError('mapping keys must be plain values, not lists or mappings', (k ?? node) as Node);
      const key = String(isScalar(k) ? k.value : null);
      const v = toValue(pair.value, doc, budget, open);
      // A `__proto__` key is data, never the object's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
    }
    open.delete(node);
    return out;
  }
  throw new YamlValueError('unsupported YAML node', node as Node);
}
