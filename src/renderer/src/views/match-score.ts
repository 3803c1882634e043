/**
 * A knowledge-base match score as agents read it beside an entry: two decimals ("0.82", "1.00"),
 * so scores line up and a bare "(1)" no longer looks like a count or a footnote.
 */
export function matchScore(score: number): string {
  return Number.isFinite(score) ? score.toFixed(2) : String(score);
}
