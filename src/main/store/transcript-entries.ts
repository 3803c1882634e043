import type { DeliveryWait, Operator, QuotedLine, TranscriptEntry } from '../../shared/console-api.ts';
import type { MessageRole, ReplyReason } from '../../shared/conversation.ts';
import { interleave } from './message-context.ts';
import type { ShownInfo } from './shown-info.ts';

/**
 * A transcript page from its rows, the same on both stores (console-queries.ts, pg/console-queries.ts):
 * each store reads its rows its own way (JSON columns parsed) and hands them here, so what an agent
 * sees cannot differ between SQLite and PostgreSQL.
 */

/** A customer's (or staff's) message row with its reply decision and its reply's delivery. */
export interface TranscriptMessageRow {
  id: number;
  msg_id: string;
  role: MessageRole;
  from_user_id: string | null;
  known_name: string | null;
  content: string | null;
  received_at: number;
  reply_scheduled: number | null;
  reply_reason: ReplyReason | null;
  reply_outcome: string | null;
  reply_note: string | null;
  delivery_id: number | null;
  delivery_state: string | null;
  delivery_attempts: number | null;
  delivery_error: string | null;
  delivery_next: number | null;
}

/** A reply row (auto, website, suggestion or operator), its JSON columns parsed. */
export interface TranscriptReplyRow {
  id: number;
  kind: string;
  msg_id: string;
  after_message_id: number;
  content: string;
  handoff: number;
  confidence: number | null;
  cause: string | null;
  created_at: number;
  sources: Array<{ id: number; score: number }>;
  engine: string;
  operator: Operator | null;
  instruction: string | null;
  /** The msg_ids it answers, as stored (JSON text). */
  reply_to: string;
  delivery_id: number | null;
  delivery_state: string | null;
  delivery_attempts: number | null;
  delivery_error: string | null;
  delivery_next: number | null;
  delivery_at: string[] | null;
}

/** A note row, its author and mentions parsed. */
export interface TranscriptNoteRow {
  id: number;
  msg_id: string;
  after_message_id: number;
  after_reply_id: number;
  author: Operator;
  content: string;
  mentions: string[];
  created_at: number;
}

type Placed = TranscriptEntry & { afterMessageId: number; tie?: number };
export type WaitOf = (id: number, state: string, next: number | null) => DeliveryWait | Record<string, never>;

/** What a pending delivery waits for: its next attempt, and an older one of the conversation ahead of it (`first`: the oldest pending). */
export function waitOfFor(first: { id: number; attempts: number; next_attempt_at: number } | undefined): WaitOf {
  return (id: number, state: string, next: number | null): DeliveryWait | Record<string, never> => {
    if (state !== 'pending') return {};
    const behind = first && first.id < id ? { id: first.id, failing: first.attempts > 0, nextAttemptAt: first.next_attempt_at } : null;
    return { nextAttemptAt: next, behind };
  };
}

/** A reply's reply_to as stored (a JSON array of msg_ids); anything else reads as none. */
function msgIds(json: string): string[] {
  const v = JSON.parse(json) as unknown;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function messageEntry(m: TranscriptMessageRow, shown: ShownInfo, quotes: Map<string, QuotedLine>, waitOf: WaitOf): TranscriptEntry {
  const { messageInfo, stored, name, quotedId: quote, mentions } = shown;
  return {
    kind: 'message',
    id: m.id,
    msgId: m.msg_id,
    role: m.role,
    speaker: m.from_user_id,
    // The latest name this sender was sent under, else the one on this line.
    speakerName: m.known_name ?? name,
    ...(quote ? { quoted: quotes.get(quote) ?? null } : {}),
    // Named by finishTranscript, with the replies' mentions, in one lookup.
    ...(mentions.length > 0 ? { mentions: mentions.map((id) => ({ id, name: null })) } : {}),
    content: m.content ?? '',
    at: m.received_at,
    decision: m.reply_reason
      ? {
          scheduled: m.reply_scheduled === 1,
          reason: m.reply_reason,
          outcome: m.reply_outcome,
          note: m.reply_note,
          delivery:
            m.delivery_state === null
              ? null
              : { id: m.delivery_id!, state: m.delivery_state, attempts: m.delivery_attempts!, lastError: m.delivery_error, ...waitOf(m.delivery_id!, m.delivery_state, m.delivery_next) },
        }
      : null,
    messageInfo,
    stored,
  };
}

export function replyEntry(r: TranscriptReplyRow, waitOf: WaitOf): Placed {
  // An operator reply is a staff line, named by the operator who sent it from the console.
  const operator = r.operator ?? undefined;
  return {
    kind: r.kind === 'suggestion' ? 'suggestion' : 'reply',
    id: r.id,
    msgId: r.msg_id,
    role: operator ? 'staff' : 'ai',
    speaker: operator?.id ?? null,
    ...(operator ? { operator, speakerName: operator.name } : {}),
    ...(r.kind === 'suggestion' ? { instruction: r.instruction } : {}),
    // A bot's reply names what it answered: the console teaches the bot from the pair.
    ...(r.kind === 'auto' || r.kind === 'website' ? { replyTo: msgIds(r.reply_to) } : {}),
    content: r.content,
    at: r.created_at,
    handoff: r.handoff === 1,
    confidence: r.confidence,
    cause: r.cause,
    sources: r.sources,
    engine: r.engine,
    delivery:
      r.delivery_id === null
        ? null
        : { id: r.delivery_id, state: r.delivery_state!, attempts: r.delivery_attempts!, lastError: r.delivery_error, ...waitOf(r.delivery_id, r.delivery_state!, r.delivery_next) },
    afterMessageId: r.after_message_id,
    // In a group a reply @-mentions whom it answers (protocol section 7).
    ...(r.delivery_at ? { mentions: r.delivery_at.map((id) => ({ id, name: null })) } : {}),
  };
}

/** Notes sit after the replies that were there when they were written (tie: just after that reply's id). `named`: agents' names by id. */
export function noteEntry(n: TranscriptNoteRow, named: Map<string, string>): Placed {
  return {
    kind: 'note',
    id: n.id,
    msgId: n.msg_id,
    role: 'staff',
    speaker: n.author.id,
    speakerName: n.author.name,
    operator: n.author,
    content: n.content,
    at: n.created_at,
    ...(n.mentions.length ? { mentions: n.mentions.map((id) => ({ id, name: named.get(id) ?? null })) } : {}),
    afterMessageId: n.after_message_id,
    tie: n.after_reply_id + 0.5,
  };
}

/** Who the page's lines @-mention, as names to look up in one read. */
export function mentionedIds(entries: readonly TranscriptEntry[]): string[] {
  return entries.flatMap((e) => e.mentions?.map((m) => m.id) ?? []);
}

/** The page in order: customer names on mentions, knowledge-base questions on sources, replies and notes placed after their messages. */
export function finishTranscript(messages: TranscriptEntry[], replies: Placed[], notes: Placed[], names: Map<string, string>, questions: Map<number, string>): TranscriptEntry[] {
  for (const e of [...messages, ...replies]) if (e.mentions) e.mentions = e.mentions.map((m) => ({ id: m.id, name: names.get(m.id) ?? null }));
  // A deleted entry has no question.
  for (const e of replies) e.sources = e.sources?.map((src) => (questions.has(src.id) ? { ...src, question: questions.get(src.id)! } : src));
  return interleave<TranscriptEntry, TranscriptEntry>(messages, [...replies, ...notes]).map((e) => {
    if (!('afterMessageId' in e)) return e;
    const { afterMessageId: _after, tie: _tie, ...entry } = e as Placed;
    return entry;
  });
}
