import type { TranscriptEntry } from '../../shared/console-api.ts';

/** Who wrote a transcript line: the operator's or sender's display name, else their id. */
export function speakerOf(e: TranscriptEntry): { id: string; name: string } | null {
  if (e.operator) return { id: `op:${e.operator.id}`, name: e.operator.name };
  // The service names the sender (the latest nickname sent for their id, or the one on this line).
  const nickname = e.speakerName ?? null;
  if (e.speaker) return { id: e.speaker, name: nickname || e.speaker };
  if (nickname) return { id: nickname, name: nickname };
  return null;
}

/** Formatters are costly to make and cheap to use: one per language and style. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(lang: string, style: 'time' | 'dateTime' | 'full' | 'clock'): Intl.DateTimeFormat {
  const key = `${lang}|${style}`;
  let f = formatters.get(key);
  if (!f) {
    const options: Record<typeof style, Intl.DateTimeFormatOptions> = {
      time: { hour: '2-digit', minute: '2-digit' },
      dateTime: { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' },
      full: { dateStyle: 'full', timeStyle: 'medium' },
      clock: { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' },
    };
    f = new Intl.DateTimeFormat(lang, options[style]);
    formatters.set(key, f);
  }
  return f;
}

const dayOf = (at: number): number => {
  const d = new Date(at);
  return d.getFullYear() * 10_000 + d.getMonth() * 100 + d.getDate();
};

/** A readable local time: the time today, else the date and time. */
export function shortTime(at: number, lang: string, now = Date.now()): string {
  return formatter(lang, dayOf(at) === dayOf(now) ? 'time' : 'dateTime').format(at);
}

/** The full local date and time, for a title. */
export function fullTime(at: number, lang: string): string {
  return formatter(lang, 'full').format(at);
}

/** HH:MM on a 24-hour clock, as in "offline since 14:05". */
export function clockTime(at: number, lang: string): string {
  return formatter(lang, 'clock').format(at);
}

const KIND_ORDER: Record<TranscriptEntry['kind'], number> = { message: 0, reply: 1, suggestion: 2, note: 3 };

/**
 * Strict time order. Messages and replies number their ids separately, so a tie in time goes
 * message first (a reply answers what came before it), then by id within a kind.
 */
export function inTimeOrder(entries: readonly TranscriptEntry[]): TranscriptEntry[] {
  return [...entries].sort((a, b) => a.at - b.at || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.id - b.id);
}
