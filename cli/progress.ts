import type { FlowSpec, JournalEntry } from '../src/engine-entry.js';
import type { CliIO } from './io.js';

export interface ProgressPrinter {
  /** RunOptions.onEntry: called for every journal entry as it is appended. */
  onEntry(entry: JournalEntry): void;
  /** Clear the live line (before a prompt or the final result). */
  clear(): void;
}

export interface ProgressOptions {
  /** Default: a live single line when stderr is a terminal, plain lines otherwise. */
  live?: boolean;
  /** Prefix for plain lines. Default `flowctl`. */
  label?: string;
}

/**
 * Progress on stderr, read only from the journal entries the engine appends (the journal is the one
 * record of what happened). On a terminal one line is rewritten in place; elsewhere (pipes, CI logs)
 * each step event is one plain line, so logs stay greppable.
 */
export function createProgressPrinter(io: CliIO, spec: FlowSpec, options: ProgressOptions = {}): ProgressPrinter {
  const live = options.live ?? Boolean(io.stderr.isTTY);
  const label = options.label ?? 'flowctl';
  const total = spec.steps.length;
  const index = new Map(spec.steps.map((s, i) => [s.id, i + 1]));
  const toolOf = new Map(spec.steps.map((s) => [s.id, `${s.tool.ref}@${s.tool.version}`]));
  let shown = false;
  let driftHinted = false;

  const columns = () => Math.max(20, ((io.stderr as { columns?: number }).columns ?? 80) - 1);
  const liveLine = (text: string) => {
    const line = text.length > columns() ? `${text.slice(0, columns() - 1)}…` : text;
    io.stderr.write(`\r\x1b[2K${line}`);
    shown = true;
  };
  const clear = () => {
    if (shown) io.stderr.write('\r\x1b[2K');
    shown = false;
  };
  const plain = (text: string) => io.stderr.write(`${label}: ${text}\n`);
  const pos = (step: string) => `[${index.get(step) ?? '?'}/${total}]`;
  const driftHint = () => {
    if (driftHinted) return;
    driftHinted = true;
    plain(
      `hint: the page changed since ${spec.name} was recorded; re-record it (flowctl record --name ${spec.name} --task <task> --ops <ops file>) or update the locator`,
    );
  };

  return {
    clear,
    onEntry(entry) {
      switch (entry.event) {
        case 'step_started': {
          const attempt = entry.attempt > 1 ? ` (attempt ${entry.attempt})` : '';
          const via = entry.provider && entry.provider !== 'in-process' ? ` via ${entry.provider}` : '';
          const text = `${pos(entry.step)} ${entry.step} ${toolOf.get(entry.step) ?? ''}${via} running${attempt}`;
          if (live) liveLine(text);
          else plain(text);
          break;
        }
        case 'step_succeeded': {
          const ms = entry.duration_ms === undefined ? '' : ` (${entry.duration_ms} ms)`;
          const warn = entry.warnings?.length ? `, ${entry.warnings.length} warning(s): ${entry.warnings.map((w) => w.code).join(', ')}` : '';
          if (live) {
            liveLine(`${pos(entry.step)} ${entry.step} succeeded${ms}${warn}`);
            if (warn) {
              clear();
              plain(`${entry.step} succeeded${warn}`);
            }
          } else plain(`${pos(entry.step)} ${entry.step} succeeded${ms}${warn}`);
          // Locator drift: what matched instead of the recorded locator, and how to fix it for good.
          for (const w of entry.warnings ?? []) {
            if (w.code !== 'drift') continue;
            clear();
            plain(`${pos(entry.step)} ${entry.step} drift: ${w.message}`);
            driftHint();
          }
          break;
        }
        case 'step_failed': {
          const retry = entry.will_retry ? ', retrying' : '';
          const text = `${pos(entry.step)} ${entry.step} failed: ${entry.error.code}: ${entry.error.message}${retry}`;
          // A failure is worth keeping on screen even in live mode.
          clear();
          plain(text);
          if (entry.error.code === 'locator_drift') driftHint();
          break;
        }
        case 'step_skipped': {
          const text = `${pos(entry.step)} ${entry.step} skipped (${entry.reason})`;
          if (live) liveLine(text);
          else plain(text);
          break;
        }
        case 'run_finished':
          clear();
          break;
        default:
          break;
      }
    },
  };
}
