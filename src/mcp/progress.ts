import type { JournalEntry } from '../run/types.js';

/** One `notifications/progress` payload, without the token. */
export interface ProgressUpdate {
  progress: number;
  total: number;
  message: string;
}

/**
 * Progress read from the journal as it is appended (never invented): `progress` counts the steps
 * finished (succeeded, skipped, or failed for good), `total` is the flow's number of steps. Other
 * entries (starts, retries, effects) give no update, so `progress` strictly increases as MCP asks.
 */
export function createProgressFromJournal(total: number): (entry: JournalEntry) => ProgressUpdate | undefined {
  let finished = 0;
  return (entry) => {
    let what: string;
    if (entry.event === 'step_succeeded') what = 'succeeded';
    else if (entry.event === 'step_skipped') what = 'skipped';
    else if (entry.event === 'step_failed' && !entry.will_retry) what = `failed (${entry.error.code})`;
    else return undefined;
    finished++;
    return { progress: finished, total, message: `step ${entry.step} ${what} (${finished}/${total})` };
  };
}
