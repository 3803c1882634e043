import { questionLikeness, SAME_QUESTION } from './similarity.ts';

export const WEEK_MS = 7 * 24 * 60 * 60_000;

export interface Groupable {
  id: number;
  kind: 'entry' | 'phrasing';
  /** The entry a proposed phrasing would join. */
  entryId: number | null;
  question: string;
  createdAt: number;
}

export interface Group<P extends Groupable> {
  /** Newest first. */
  proposals: P[];
  /** Set when every proposal of the group would join this entry. */
  entryId: number | null;
  count: number;
  /** How many came in the last seven days before `now`. */
  thisWeek: number;
  lastAt: number;
}

/**
 * Proposals that ask the same thing, together: phrasings for one entry form one group; proposed
 * new entries join the first group (oldest first) whose first question is close to theirs. A greedy
 * pass against each group's first question, not a full clustering: a group then cannot drift one
 * small step at a time into questions unlike its first, and the result does not depend on how
 * many proposals came between. Largest groups first, then the most recent.
 */
export function groupProposals<P extends Groupable>(proposals: readonly P[], now: number): Array<Group<P>> {
  const groups: Array<{ head: P; members: P[]; entryId: number | null }> = [];
  const byEntry = new Map<number, (typeof groups)[number]>();
  for (const p of [...proposals].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)) {
    if (p.kind === 'phrasing' && p.entryId !== null) {
      const g = byEntry.get(p.entryId);
      if (g) g.members.push(p);
      else {
        const made = { head: p, members: [p], entryId: p.entryId };
        byEntry.set(p.entryId, made);
        groups.push(made);
      }
      continue;
    }
    const g = groups.find((x) => x.entryId === null && questionLikeness(x.head.question, p.question) >= SAME_QUESTION);
    if (g) g.members.push(p);
    else groups.push({ head: p, members: [p], entryId: null });
  }
  return groups
    .map((g) => {
      const members = [...g.members].reverse();
      return {
        proposals: members,
        entryId: g.entryId,
        count: members.length,
        thisWeek: members.filter((m) => m.createdAt > now - WEEK_MS && m.createdAt <= now).length,
        lastAt: members[0]!.createdAt,
      };
    })
    .sort((a, b) => b.count - a.count || b.lastAt - a.lastAt);
}
