import type { ReplayChange, ReplayRowSide, ReplaySideTotals, ReplayTotals } from '../../shared/console-replay.ts';

/**
 * How a question's outcome moved. A handoff is a handoff whatever its text (the fallback); two
 * answers differ when their words do, so an LLM that words the same answer anew shows up too:
 * that is what the customer would read.
 */
export function changeOf(before: ReplayRowSide, after: ReplayRowSide): ReplayChange {
  if (before.handoff !== after.handoff) return after.handoff ? 'now_handoff' : 'now_answered';
  if (before.handoff) return 'same';
  return before.content.trim() === after.content.trim() ? 'same' : 'other_answer';
}

const emptySide = (): ReplaySideTotals => ({ answered: 0, handoff: 0, llmCalls: 0, callsWithUsage: 0, promptTokens: 0, completionTokens: 0, llmMs: 0 });

function add(totals: ReplaySideTotals, side: ReplayRowSide): void {
  if (side.handoff) totals.handoff++;
  else totals.answered++;
  if (!side.llm) return;
  totals.llmCalls++;
  totals.llmMs += side.ms;
  if (side.tokens) {
    totals.callsWithUsage++;
    totals.promptTokens += side.tokens.prompt;
    totals.completionTokens += side.tokens.completion;
  }
}

/** Answered and handed off before and after, the changes by kind, and what the LLM calls cost. */
export function summarize(rows: ReadonlyArray<{ before: ReplayRowSide; after: ReplayRowSide; change: ReplayChange }>, elapsedMs: number): ReplayTotals {
  const totals: ReplayTotals = { questions: rows.length, before: emptySide(), after: emptySide(), changed: { now_answered: 0, now_handoff: 0, other_answer: 0 }, elapsedMs };
  for (const r of rows) {
    add(totals.before, r.before);
    add(totals.after, r.after);
    if (r.change !== 'same') totals.changed[r.change]++;
  }
  totals.before.llmMs = Math.round(totals.before.llmMs);
  totals.after.llmMs = Math.round(totals.after.llmMs);
  return totals;
}
