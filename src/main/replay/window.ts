/** Which past questions a replay reads: received in [from, to), epoch ms. */
export interface ReplayWindow {
  from: number;
  to: number;
}

export class ReplayInputError extends Error {}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
/** A replay reads stored messages: a year back is as far as it goes. */
const MAX_SPAN_MS = 366 * 86_400_000;

/** "90m", "24h", "7d", "2w": a span back from now, in ms. */
export function parseSince(text: string): number {
  const m = /^(\d{1,4})([mhdw])$/.exec(text.trim());
  if (!m) throw new ReplayInputError(`--since takes a number and a unit (m, h, d or w), like 7d or 24h; got "${text}"`);
  const ms = Number(m[1]) * UNITS[m[2]!]!;
  if (ms === 0) throw new ReplayInputError(`--since must be more than 0, got "${text}"`);
  if (ms > MAX_SPAN_MS) throw new ReplayInputError(`--since reaches back at most a year (366d), got "${text}"`);
  return ms;
}

/** A date (2026-11-14, taken as UTC midnight), a date and time (ISO 8601), or epoch ms. */
export function parseInstant(text: string, flag: string): number {
  const t = text.trim();
  const ms = /^\d{10,}$/.test(t) ? Number(t) : /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(t) ? Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t) : Number.NaN;
  if (!Number.isFinite(ms)) throw new ReplayInputError(`${flag} takes a date (2026-11-14), a date and time (2026-11-14T09:00:00Z) or epoch milliseconds; got "${text}"`);
  return ms;
}

/**
 * The window from `since` (back from now), or from/to (to defaults to now). Exactly one way:
 * `since` with `from` would leave the operator guessing which one counted.
 */
export function resolveWindow(input: { since?: string | undefined; from?: number | undefined; to?: number | undefined }, now: number): ReplayWindow {
  if (input.since !== undefined && (input.from !== undefined || input.to !== undefined)) {
    throw new ReplayInputError('give either --since or --from/--to, not both');
  }
  if (input.since !== undefined) return { from: now - parseSince(input.since), to: now };
  if (input.from === undefined) throw new ReplayInputError('say which questions to replay: --since 7d, or --from DATE [--to DATE]');
  const to = input.to ?? now;
  if (to <= input.from) throw new ReplayInputError('--to must be after --from');
  if (to - input.from > MAX_SPAN_MS) throw new ReplayInputError('a replay window spans at most a year (366 days)');
  return { from: input.from, to };
}
