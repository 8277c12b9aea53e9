import type { AuthoringSession } from '../../api';

/** A captured op (docs/recordings.md) as the studio reads it: any of the engine's op kinds. */
export type Op = Record<string, any>;
/** Where a fill or select takes its value from: the recorded one, an input slot, or a secret slot. */
export type Mode = 'literal' | 'input' | 'secret';

export const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Actions a step may skip when their element is absent (`optional`, docs/recordings.md "Optional steps"). */
const OPTIONAL_KINDS = new Set(['click', 'fill', 'select', 'drag', 'upload', 'press', 'hover', 'check', 'uncheck']);
export const canBeOptional = (op: Op): boolean => OPTIONAL_KINDS.has(op.kind) && op.target !== undefined;

export const fileList = (files: unknown): string => (Array.isArray(files) ? files.join(', ') : String(files ?? ''));

/** A short name for an op's target: its primary locator. */
export function describeTarget(t: any): string {
  if (typeof t === 'string') return t;
  if (!t || typeof t !== 'object') return '?';
  if (t.testid) return `test id "${t.testid}"`;
  if (t.role) return t.name ? `${t.role} "${t.name}"` : t.role;
  if (t.label) return `label "${t.label}"`;
  if (t.text) return `text "${t.text}"`;
  if (t.css) return t.css;
  if (t.xpath) return t.xpath;
  return '?';
}

/** A slot name for an op's value, from its target's test id, name, label or text. */
export function slugOf(op: Op): string {
  const t = op.target ?? {};
  const raw = String(t.testid ?? t.name ?? t.label ?? t.text ?? 'value');
  let s =
    raw
      .replace(/[^A-Za-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toLowerCase()
      .slice(0, 40) || 'value';
  if (!/^[A-Za-z_]/.test(s)) s = `_${s}`;
  return s;
}

export function modeOf(op: Op, session: AuthoringSession): Mode {
  if (op.slot && session.secret_slots.includes(op.slot)) return 'secret';
  if (op.slot && session.input_slots.includes(op.slot)) return 'input';
  return 'literal';
}

/** Capture slots follow the ops: each list names the slots of the ops in that mode. */
export function slotsOf(ops: Op[], modes: Mode[]) {
  const input = new Set<string>();
  const secret = new Set<string>();
  ops.forEach((op, i) => {
    if (op.slot && modes[i] === 'input') input.add(op.slot);
    if (op.slot && modes[i] === 'secret') secret.add(op.slot);
  });
  return { input_slots: [...input], secret_slots: [...secret] };
}
