import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import { checkJournalChain, entryDigest, sealEntry } from '../../../src/run/journal.js';
import { sampleJournal } from '../../../testing/conformance-fixtures.js';
import type { JournalEntry } from '../../../src/run/types.js';

const codeOf = (entries: JournalEntry[]) => {
  try {
    checkJournalChain(entries);
    return 'ok';
  } catch (err) {
    const e = err as { code: string; data: { seq: number; field: string } };
    return `${e.code}@${e.data.seq}:${e.data.field}`;
  }
};

describe('journal hash chain', () => {
  it('digests an entry without `at` and `digest`', () => {
    const [first] = sampleJournal(1);
    const { at: _at, digest, ...rest } = first!;
    expect(digest).toBe(digestOf(rest));
    expect(entryDigest({ ...first!, at: '2030-01-01T00:00:00.000Z' })).toBe(digest);
    expect(sealEntry({ ...rest, at: 'whenever' } as never).digest).toBe(digest);
  });

  it('accepts a valid chain and names the first bad entry otherwise', () => {
    const j = sampleJournal(5, true);
    expect(codeOf(j)).toBe('ok');
    expect(codeOf([j[0]!, j[2]!, j[3]!])).toBe('journal_sequence@1:seq');
    expect(codeOf([j[1]!, j[0]!])).toBe('journal_sequence@0:seq');
    expect(codeOf(j.map((e) => (e.seq === 3 ? ({ ...e, reason: 'edited' } as JournalEntry) : e)))).toBe('journal_chain_broken@3:digest');
    expect(codeOf(j.map((e) => (e.seq === 2 ? sealEntry({ ...e, prev: null } as never) : e)))).toBe('journal_chain_broken@2:prev');
    // Re-sealing an edited entry moves the break to the next link.
    expect(codeOf(j.map((e) => (e.seq === 2 ? sealEntry({ ...e, reason: 'edited' } as never) : e)))).toBe('journal_chain_broken@3:prev');
  });
});
