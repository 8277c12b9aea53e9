import type { Run } from './types.js';

// The JSON texts of a Run's journal entries as the engine stored them, by the Run's journal array.
const journalTexts = new WeakMap<readonly unknown[], readonly string[]>();

/** Remember the stored JSON texts of a Run's journal (same order as run.journal; runJson checks the length). */
export function rememberJournalTexts(journal: readonly unknown[], texts: readonly string[]): void {
  journalTexts.set(journal, texts);
}

/**
 * The JSON text of a Run, as JSON.stringify would give it but with `journal` last and, for a Run
 * the engine just finished, each entry as the text it stored (no second serialisation per response).
 */
export function runJson(run: Run): string {
  const { journal, ...head } = run;
  const headText = JSON.stringify(head);
  const texts = journalTexts.get(journal);
  const entries = texts && texts.length === journal.length ? texts.join(',') : journal.map((e) => JSON.stringify(e)).join(',');
  return `${headText.slice(0, -1)}${headText.length > 2 ? ',' : ''}"journal":[${entries}]}`;
}
