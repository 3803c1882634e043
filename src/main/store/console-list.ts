import type { Db } from './db.ts';
import type { Assignment, ConversationPage, ConversationSummary, ConversationView } from '../../shared/console-api.ts';
import type { AutoReplyState, Channel, MessageRole } from '../../shared/conversation.ts';
import { encodeCursor, type ListCursor } from '../../shared/list-cursor.ts';
import { toConversationRow, type RawConversation } from './conversations.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';
import { UNREAD_FOR, type Reader } from './team.ts';

type RawConv = RawConversation & { last_line: string | null; last_reply?: string | null; last_customer?: string | null; match_id?: number; match_text?: string | null; my_unread?: number };

/** How much of a matching message precedes the match in its excerpt. */
const EXCERPT_LEAD = 24;

/** A search's matching message cut to begin shortly before the match, which a long line would hide past its ellipsis. */
export function excerpt(content: string, needle: string): string {
  const at = content.toLowerCase().indexOf(needle);
  if (at <= EXCERPT_LEAD) return content;
  // Start on a word boundary where there is one close by, so the excerpt does not open mid-word.
  const space = content.lastIndexOf(' ', at - EXCERPT_LEAD);
  const from = space >= 0 && at - space <= 2 * EXCERPT_LEAD ? space + 1 : at - EXCERPT_LEAD;
  return `…${content.slice(from)}`;
}

export const toSummary = (r: RawConv): ConversationSummary => {
  const { createdAt: _createdAt, ...stored } = toConversationRow(r);
  // The caller's own count when read for an account; the shared counter for a console without one.
  const plain = r.my_unread === undefined ? stored : { ...stored, unread: r.my_unread };
  const asked = r.last_customer ? (JSON.parse(r.last_customer) as [string, string | null]) : null;
  const row = r.last_customer === undefined ? plain : { ...plain, lastCustomerText: asked?.[0] ?? null, lastCustomerBy: plain.groupId ? (asked?.[1] ?? null) : null };
  if (r.last_reply) {
    // The bot or an operator spoke last: the preview says what the customer was told, and by whom.
    const [kind, content, operator] = JSON.parse(r.last_reply) as ['auto' | 'website' | 'operator', string, string | null];
    return { ...row, lastText: content, lastCommand: null, lastReply: { by: kind === 'operator' ? 'operator' : 'bot', operator } };
  }
  if (r.last_line === null) return { ...row, lastText: null, lastCommand: null };
  const [role, content, source, operator, note] = JSON.parse(r.last_line) as [MessageRole, string | null, string | null, string | null, unknown];
  // A command line (a stop, a resume) previews as the transcript says it, not as its raw command.
  if (role === 'command') {
    const lastCommand =
      content !== null
        ? { command: content, source: source === 'console' ? ('console' as const) : ('integration' as const), operator, ...(typeof note === 'string' && note !== '' ? { note } : {}) }
        : null;
    return { ...row, lastText: content, lastCommand };
  }
  // For a message line the same slots hold who wrote it: the sender's id and latest name.
  return { ...row, lastText: content, lastCommand: null, lastSpeaker: { role, id: source, name: operator } };
};

/** Plain data in, plain data out: the read worker runs this off the main thread. */
export interface ConversationFilter {
  clientId?: string | undefined;
  channel?: Channel | undefined;
  state?: AutoReplyState | 'needs_human' | undefined;
  search?: string | undefined;
  view?: ConversationView | undefined;
  /** Team workflow: the reader's own conversations, those nobody has, or all (default). */
  assignment?: Assignment | undefined;
  /** Whose unread counts, Mine and Needs you these are; null or absent: a console with no account (shared counts, everyone's queue). */
  reader?: Reader | null | undefined;
  limit: number;
  /** Decoded and checked against the view and search where the call enters (consoleInputs). */
  cursor?: ListCursor | undefined;
  now: number;
}

/** How many of the newest messages a search shorter than the trigram index's 3 characters reads. */
export const SHORT_SEARCH_WINDOW = 50_000;

/**
 * The conversation's last line as [role, content, source, operator name, flag note (cut as the transcript cuts it)]: one correlated lookup
 * (SQLite has no two-column scalar subquery); only a command line reads its message_info. Then
 * the last reply (the bot's or an operator's; replies live in their own table) if it came after
 * the last message: a reply answers the newest message there was, so it is later than that one.
 */
export const LAST_TEXT = `(SELECT CASE WHEN m.role = 'command'
     THEN json_array(m.role, m.content, json_extract(m.message_info, '$.source'), json_extract(m.message_info, '$.operator.name'), substr(json_extract(m.message_info, '$.note'), 1, ${TRANSCRIPT_TEXT_MAX}))
     ELSE json_array(m.role, m.content, m.from_user_id, (SELECT p.nickname FROM people p WHERE p.client_id = m.client_id AND p.user_id = m.from_user_id)) END
   FROM messages m WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1) AS last_line,
  (SELECT json_array(r.kind, r.content, json_extract(r.operator, '$.name')) FROM replies r
   WHERE r.conversation_id = c.id AND r.kind != 'suggestion' AND r.content != ''
     AND r.after_message_id >= (SELECT coalesce(max(lm.id), 0) FROM messages lm WHERE lm.conversation_id = c.id)
   ORDER BY r.after_message_id DESC, r.id DESC LIMIT 1) AS last_reply`;

/**
 * The messages containing `search` (case folded as SQLite's lower() folds it: ASCII only), as a
 * FROM and WHERE over `m` (messages) that can be walked newest first, `ORDER BY m.id DESC`, and
 * stopped early. Three or more characters go through the trigram index, the user's text quoted as
 * one FTS5 string (a phrase is a substring for trigrams, so quotes, operators and CJK are plain
 * text); the index folds more case than lower() does, so instr() then keeps exactly the rows the
 * old scan kept. Shorter text cannot use trigrams: it reads only the newest SHORT_SEARCH_WINDOW
 * messages, a bounded cost, and older matches are not found.
 */
export function messageSearch(search: string): { from: string; where: string; order: string; args: string[]; needle: string } {
  const needle = search.toLowerCase();
  if ([...search].length >= 3) {
    return {
      from: 'messages_fts f JOIN messages m ON m.id = f.rowid',
      where: 'messages_fts MATCH ? AND f.rowid < ? AND instr(lower(m.content), ?) > 0',
      order: 'f.rowid DESC',
      args: [`"${search.replaceAll('"', '""')}"`],
      needle,
    };
  }
  return {
    from: 'messages m',
    where: `m.id > (SELECT coalesce(max(id), 0) FROM messages) - ${SHORT_SEARCH_WINDOW} AND m.id < ? AND instr(lower(m.content), ?) > 0`,
    order: 'm.id DESC',
    args: [],
    needle,
  };
}

/**
 * In Needs you, what the customer last said: the last line is often the bot's fallback or a failed
 * reply, and the queue is triaged by what the customer wants. Read only for the page's rows.
 */
const LAST_CUSTOMER = `(SELECT json_array(m.content, coalesce((SELECT p.nickname FROM people p WHERE p.client_id = m.client_id AND p.user_id = m.from_user_id), m.from_user_id))
   FROM messages m WHERE m.conversation_id = c.id AND m.role = 'customer' AND m.content IS NOT NULL AND m.reply_reason IS NOT 'not_mentioned'
   ORDER BY m.id DESC LIMIT 1) AS last_customer`;

type Args = Array<string | number>;

function filterClauses(f: ConversationFilter): { where: string[]; args: Args } {
  const where: string[] = [];
  const args: Args = [];
  const add = (clause: string, ...values: Args): void => {
    where.push(clause);
    args.push(...values);
  };
  // Unary + keeps the client's (client_id, channel, peer) index out: that would read all its rows and sort them, per page.
  if (f.clientId) add('+c.client_id = ?', f.clientId);
  if (f.channel) add('c.channel = ?', f.channel);
  if (f.state === 'needs_human') add('c.needs_human = 1');
  else if (f.state === 'active') add("(c.auto_reply = 'active' OR (c.auto_reply = 'paused' AND c.paused_until <= ?))", f.now);
  else if (f.state === 'paused') add("c.auto_reply = 'paused' AND c.paused_until > ?", f.now);
  else if (f.state === 'stopped') add("c.auto_reply = 'stopped'");
  if (f.view === 'needs_you') {
    add('c.needs_human = 1');
    // Needs you is the reader's: theirs and the queue's, not what a colleague has taken.
    if (f.reader) add('(c.assignee IS NULL OR c.assignee = ?)', f.reader.id);
  }
  if (f.assignment === 'unassigned') add('c.assignee IS NULL');
  else if (f.assignment === 'mine') {
    if (f.reader) add('c.assignee = ?', f.reader.id);
    else add('0');
  }
  return { where, args };
}

/**
 * One page of the console list, keyset-paged on its sort key: the newest activity first, or in
 * "needs you" the longest wait first. A search lists the conversations whose own fields match
 * (a 1:1 conversation's customer id and name, a group's id and name: a group's customer
 * fields name only the member who wrote first) first, in that order, then those with a matching message,
 * newest matching message first: that walk reads the message index newest first and stops at the
 * page, where ordering every match by the conversation's activity would read all matches.
 */
/** `text` anywhere in a field, LIKE's own wildcards escaped. */
const pattern = (text: string | undefined): string => (text ? `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%` : '');

export function conversationPage(db: Db, f: ConversationFilter): ConversationPage {
  const needsYou = f.view === 'needs_you';
  const order = needsYou ? 'c.needs_human_since, c.id' : 'c.last_message_at DESC, c.id';
  const base = filterClauses(f);
  const fieldMatch = f.search
    ? `((c.group_id IS NULL AND (c.customer_id LIKE ? ESCAPE '\\' OR c.customer_name LIKE ? ESCAPE '\\')) OR c.group_id LIKE ? ESCAPE '\\' OR c.group_name LIKE ? ESCAPE '\\')`
    : null;
  const patterns: string[] = Array(4).fill(pattern(f.search));
  const items: ConversationSummary[] = [];
  // The reader's unread count is a column of the page's rows only, like their last line.
  const unread = f.reader ? `, ${UNREAD_FOR} AS my_unread` : '';
  const unreadArgs: Args = f.reader ? [f.reader.id, f.reader.floor] : [];

  if (f.cursor?.k !== 'match') {
    const where = [...base.where];
    const args = [...base.args];
    if (f.cursor?.k === 'recent') {
      where.push('c.last_message_at <= ? AND (c.last_message_at < ? OR c.id > ?)');
      args.push(f.cursor.at, f.cursor.at, f.cursor.id);
    } else if (f.cursor?.k === 'needs') {
      where.push('c.needs_human_since >= ? AND (c.needs_human_since > ? OR c.id > ?)');
      args.push(f.cursor.at, f.cursor.at, f.cursor.id);
    }
    if (fieldMatch) {
      where.push(fieldMatch);
      args.push(...patterns);
    }
    // The page is chosen first and only its rows read their last message: a correlated
    // subquery in the outer select would otherwise run for every conversation before the sort.
    // A field search (LIKE '%text%') reads every conversation whatever the order: one pass over
    // the table and a sort of the matches (+ keeps the order index out) is 3x cheaper than
    // walking the order index and fetching each row from it.
    const inner = fieldMatch ? order.replace(/^c\./, '+c.') : order;
    const sql = `SELECT c.*, ${LAST_TEXT}${unread}${needsYou ? `, ${LAST_CUSTOMER}` : ''}
                 FROM (SELECT c.* FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${inner} LIMIT ?) c
                 ORDER BY ${order}`;
    const rows = (db.prepare(sql).all(...unreadArgs, ...args, f.limit + 1) as unknown as RawConv[]).map(toSummary);
    if (rows.length > f.limit) {
      const page = rows.slice(0, f.limit);
      const last = page.at(-1)!;
      const cursor: ListCursor = needsYou ? { k: 'needs', at: last.needsHumanSince ?? 0, id: last.id } : { k: 'recent', at: last.lastMessageAt, id: last.id };
      return { items: page, nextCursor: encodeCursor(cursor) };
    }
    items.push(...rows);
    if (!f.search) return { items, nextCursor: null };
  }

  // Matching messages, newest first; each conversation once, at its newest match (NOT EXISTS a
  // newer one), so pages never repeat a conversation, even when messages arrive between pages.
  const text = messageSearch(f.search!);
  const want = f.limit - items.length;
  const sql = `SELECT c.*, ${LAST_TEXT}${unread}, m.id AS match_id, m.content AS match_text
               FROM ${text.from} JOIN conversations c ON c.id = m.conversation_id
               WHERE ${text.where}
                 ${base.where.map((w) => `AND ${w}`).join(' ')}
                 AND ${fieldMatch!} IS NOT 1
                 AND NOT EXISTS (SELECT 1 FROM messages n WHERE n.conversation_id = m.conversation_id AND n.id > m.id AND instr(lower(n.content), ?) > 0)
               ORDER BY ${text.order} LIMIT ?`;
  const before = f.cursor?.k === 'match' ? f.cursor.before : Number.MAX_SAFE_INTEGER;
  const rows = db.prepare(sql).all(...unreadArgs, ...text.args, before, text.needle, ...base.args, ...patterns, text.needle, want + 1) as unknown as RawConv[];
  const more = rows.length > want;
  const page = more ? rows.slice(0, want) : rows;
  items.push(...page.map((r) => ({ ...toSummary(r), matchText: excerpt(r.match_text ?? '', text.needle) })));
  // A full page of field matches and none left over for messages: the message walk starts on the next page.
  if (want === 0) return { items, nextCursor: rows.length > 0 ? encodeCursor({ k: 'match', before: Number.MAX_SAFE_INTEGER }) : null };
  return { items, nextCursor: more ? encodeCursor({ k: 'match', before: page.at(-1)!.match_id! }) : null };
}
