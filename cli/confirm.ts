import type { EffectSummary } from '../src/engine-entry.js';
import type { CliIO } from './io.js';

/** Human lines describing what a flow can do outside the process (for the prompt and `--dry`). */
export function formatEffectSummary(summary: EffectSummary): string[] {
  if (!summary.outward) return ['outward effects: none (pure flow)'];
  const lines = ['outward effects:'];
  const list = (items: string[]) => (items.length ? items.join(', ') : '(decided at run time)');
  const caps = new Set(summary.steps.flatMap((s) => s.capabilities));
  if (caps.has('net')) lines.push(`  network hosts: ${list(summary.net_hosts)}`);
  if (caps.has('fs')) lines.push(`  file writes:   ${list(summary.fs_writes)}`);
  if (caps.has('spawn')) lines.push(`  spawns:        ${list(summary.spawns)}`);
  if (summary.browser) lines.push('  browser:       yes');
  for (const s of summary.steps) {
    if (!s.capabilities.some((c) => c !== 'secrets')) continue;
    const targets = s.targets.length ? ` -> ${s.targets.join(', ')}` : '';
    lines.push(`  step ${s.step} (${s.tool}): ${s.capabilities.join(', ')}${targets}`);
  }
  return lines;
}

/** Why a run did not get its confirmation. */
export type Refusal = 'declined' | 'no_tty';

export interface ConfirmGate {
  /** The RunOptions.confirm to pass; undefined with `--yes` (the engine then never asks). */
  confirm?: (summary: EffectSummary) => Promise<boolean>;
  /** Set when the gate said no: the command exits with EXIT.refused. */
  readonly refusal: Refusal | undefined;
  /** Whether the question was put to the user. */
  readonly asked: boolean;
}

export interface ConfirmOptions {
  /** `--yes`: never ask. */
  yes: boolean;
  /** What the prompt says is about to happen, e.g. `run hello`. */
  action: string;
  /** Called before the prompt is written, so a live progress line can step aside. */
  beforePrompt?: () => void;
}

/**
 * The safe default of spec/engine.md: ask once before the first outward step. The engine calls
 * `confirm` at most once, right before that step, so pure steps before it have already run and no
 * outward step has. With no terminal on stdin there is nobody to ask: refuse instead of hanging.
 */
export function createConfirmGate(io: CliIO, options: ConfirmOptions): ConfirmGate {
  let refusal: Refusal | undefined;
  let asked = false;
  const gate: ConfirmGate = {
    get refusal() {
      return refusal;
    },
    get asked() {
      return asked;
    },
  };
  if (options.yes) return gate;
  gate.confirm = async (summary) => {
    if (!summary.outward) return true;
    options.beforePrompt?.();
    io.stderr.write(`${options.action} has outward effects.\n${formatEffectSummary(summary).join('\n')}\n`);
    if (!io.stdin.isTTY) {
      refusal = 'no_tty';
      io.stderr.write('flowctl: refusing: stdin is not a terminal, so nobody can confirm. Re-run with --yes to allow these effects.\n');
      return false;
    }
    asked = true;
    const yes = await askYesNo(io, 'Proceed? [y/N] ');
    if (!yes) {
      refusal = 'declined';
      io.stderr.write('flowctl: not confirmed; no outward step ran.\n');
    }
    return yes;
  };
  return gate;
}

/** One line from the terminal; only `y` or `yes` (any case) is a yes. End of input and Ctrl-C are a no. */
export async function askYesNo(io: CliIO, question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
  try {
    return await new Promise<boolean>((resolve) => {
      rl.once('line', (line) => resolve(/^\s*y(es)?\s*$/i.test(line)));
      rl.once('close', () => resolve(false));
      rl.once('SIGINT', () => {
        io.stderr.write('\n');
        resolve(false);
      });
      rl.setPrompt(question);
      rl.prompt();
    });
  } finally {
    rl.close();
  }
}
