/** Pure rules of what the operator console shows (no DOM): the renderer's views use them, tests check them beside. */
import type { ConversationLabel, TranscriptEntry } from './console-api.ts';
import { BUILTIN_ENGINE } from './engine-config.ts';

/**
 * A conversation as the operator names it (protocol v1.2's names): a group by its group_name, a
 * customer by their nickname; the id only where no name was ever sent.
 */
export function conversationTitle(c: ConversationLabel): string {
  if (c.groupId) return c.groupName ?? `# ${c.groupId}`;
  return c.customerName ?? c.customerId ?? c.peer;
}

/** The id agents quote to colleagues: the group's, else the customer's. */
export function conversationRef(c: ConversationLabel): string {
  return c.groupId ?? c.customerId ?? c.peer;
}

/** The id to show beside the title, in small type: none where the title is the id already. */
export function refBeside(c: ConversationLabel): string | null {
  const title = conversationTitle(c);
  const ref = conversationRef(c);
  return title === ref || title === `# ${ref}` ? null : ref;
}

/** The title with the id after it where they differ, for a hover ("Nora (wxid_8g2k)"). */
export function titleHover(c: ConversationLabel): string {
  const title = conversationTitle(c);
  const ref = conversationRef(c);
  return title === ref ? title : `${title} (${ref})`;
}

/** The title with its id when they differ ("Nora (wxid_8g2k)"), for a sentence that must carry both. */
export function titleWithRef(c: ConversationLabel): string {
  const title = conversationTitle(c);
  const ref = conversationRef(c);
  if (c.groupId) return c.groupName ? `${title} (group ${ref})` : `group ${ref}`;
  return title === ref ? ref : `${title} (${ref})`;
}

type Source = NonNullable<TranscriptEntry['sources']>[number];

/**
 * What a reply's knowledge-base entries were to it:
 * - used: the built-in engine answered with this entry's answer (the best match, whose score is the confidence);
 * - grounding: an LLM engine answered and was given these entries (which it drew on, the data does not say);
 * - closest: no confident answer (a handoff): the nearest entries, below the threshold and not used.
 */
export type SourceUse = { kind: 'used' | 'grounding' | 'closest'; sources: Source[] };

export function sourceUse(e: Pick<TranscriptEntry, 'sources' | 'handoff' | 'confidence' | 'engine'>): SourceUse | null {
  const sources = e.sources ?? [];
  if (sources.length === 0) return null;
  if (e.handoff) return { kind: 'closest', sources };
  if (e.engine !== BUILTIN_ENGINE) return { kind: 'grounding', sources };
  // The built-in engine sends the best entry's answer as it stands; the others only ranked lower.
  const used = sources.find((s) => s.score === e.confidence) ?? sources[0]!;
  return { kind: 'used', sources: [used] };
}

/**
 * A URL with its query's values hidden, names kept: `?token=abc&x=1` -> `?token=…&x=…`. A send_url's
 * query often carries a token; the console shows where a delivery goes without showing it.
 */
export function maskUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.replace(/=[^&#]*/g, '=…');
  }
  const query = u.search ? `?${[...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=…`).join('&')}` : '';
  const auth = u.username ? '…@' : '';
  return `${u.protocol}//${auth}${u.host}${u.pathname}${query}${u.hash ? '#…' : ''}`;
}

/**
 * A send_url as a column can hold it: host (and port), path and the query's names, values masked,
 * without the scheme. A long one keeps its start and its end.
 */
export function shortUrl(url: string, max = 48): string {
  // Without the scheme, and without the lone "/" of a bare host.
  const short = maskUrl(url)
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/^([^/?#]*)\/(?=$|[?#])/, '$1');
  if (short.length <= max) return short;
  const keep = max - 1;
  return `${short.slice(0, Math.ceil(keep * 0.6))}…${short.slice(short.length - Math.floor(keep * 0.4))}`;
}

/** What failed, short enough for its own column: the receiver's HTTP status, or the kind of network error. */
export type DeliveryStatus = { http: number } | { kind: 'timeout' | 'refused' | 'dns' | 'bad_url' | 'network' } | null;

/** A delivery row's last failure. A cancelled row's error is the cancel's reason, not a failure. */
export function deliveryStatus(d: { state: string; lastStatus: number | null; lastError: string | null }): DeliveryStatus {
  if (d.state === 'cancelled' && d.lastStatus === null) return null;
  return tryStatus(d.lastStatus, d.lastError);
}

/** One try's answer: its HTTP status, or the kind of error it ended with (null: none). */
export function tryStatus(status: number | null, error: string | null): DeliveryStatus {
  if (status !== null) return { http: status };
  if (!error) return null;
  const http = /\bHTTP (\d{3})\b/.exec(error);
  if (http) return { http: Number(http[1]) };
  if (/^no answer within/.test(error) || /ETIMEDOUT|timed? ?out/i.test(error)) return { kind: 'timeout' };
  if (/ECONNREFUSED/.test(error)) return { kind: 'refused' };
  if (/ENOTFOUND|EAI_AGAIN|has no address/.test(error)) return { kind: 'dns' };
  if (/not a URL|link-local|metadata address|private address|loopback/i.test(error)) return { kind: 'bad_url' };
  return { kind: 'network' };
}

/**
 * "Alice Chen" -> "AC", "bob" -> "B", "王小明" -> "王", "Tom (staff)" -> "T": letters (and digits)
 * only, from the name outside any brackets; punctuation never makes an initial.
 */
export function initials(name: string): string {
  const bare = name.replace(/\([^)]*\)|\[[^\]]*\]|（[^）]*）|【[^】]*】/g, ' ');
  const wordsOf = (text: string): string[] => text.split(/[^\p{L}\p{N}\p{M}]+/u).filter(Boolean);
  // A name that is all brackets ("(staff)") still has its letters.
  const words = wordsOf(bare).length ? wordsOf(bare) : wordsOf(name);
  const first = (w: string): string => Array.from(w)[0] ?? '';
  // A CJK character is as wide as two Latin letters: one fills the badge ("Ops 夜班群" is O, not O夜).
  const wide = (ch: string): boolean => /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(ch);
  const two = words.length > 1 ? [first(words[0]!), first(words[1]!)] : [first(words[0] ?? '')];
  const letters = two.some(wide) ? two[0]! : two.join('');
  return letters.toLocaleUpperCase() || '?';
}
