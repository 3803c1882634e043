import { buildKbIndex, type KbIndex } from '../engines/kb-index.ts';

/**
 * The pending proposals as knowledge-base changes (the Learn view's store exports them as
 * `store.proposals.pendingChanges()`): new entries, and new phrasings of existing ones.
 */
export interface CandidateChanges {
  entries: Array<{ question: string; answer: string; phrasings: string[] }>;
  phrasings: Array<{ entryId: number; text: string }>;
}

export type PendingChanges = () => CandidateChanges | Promise<CandidateChanges>;

type Entry = { id: number; question: string; answer: string; phrasings: string[] };

/**
 * The knowledge base as it would be with the changes, in memory only: new entries numbered after
 * the highest id (as the store would number them), phrasings added to their entry. A phrasing for
 * an entry that is gone is left out and counted, so the report can say so.
 */
export function candidateKnowledge(current: readonly Entry[], changes: CandidateChanges): { index: KbIndex; entries: number; phrasings: number; orphaned: number } {
  const byId = new Map(current.map((e) => [e.id, { ...e, phrasings: [...e.phrasings] }]));
  let orphaned = 0;
  let phrasings = 0;
  for (const p of changes.phrasings) {
    const entry = byId.get(p.entryId);
    if (!entry) {
      orphaned++;
      continue;
    }
    entry.phrasings.push(p.text);
    phrasings++;
  }
  let next = current.reduce((max, e) => Math.max(max, e.id), 0);
  for (const e of changes.entries) byId.set(++next, { id: next, question: e.question, answer: e.answer, phrasings: [...e.phrasings] });
  return { index: buildKbIndex([...byId.values()]), entries: changes.entries.length, phrasings, orphaned };
}
