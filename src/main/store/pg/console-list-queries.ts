import type { ConversationPage, ConversationSummary } from '../../../shared/console-api.ts';
import { TRANSCRIPT_TEXT_MAX, UNREAD_WINDOW } from '../../../shared/console-api.ts';
import { encodeCursor, type ListCursor } from '../../../shared/list-cursor.ts';
import { excerpt, SHORT_SEARCH_WINDOW, toSummary, type ConversationFilter } from '../console-list.ts';
import type { RawConversation } from '../conversations.ts';
import type { Reader } from '../team.ts';
import { int8, type PgQueryable } from './pool.ts';

/**
 * The console list on PostgreSQL (console-list.ts's conversationPage): the same rows, order,
 * cursors and search rules for the same data. What differs is only how SQLite's dialect is said:
 * - SQLite's lower() and LIKE fold ASCII only: both become translate() of A–Z, so É stays É as
 *   there, whatever the database's locale folds.
 * - Text ids sort by byte order (COLLATE "C", as SQLite's BINARY), NULLs first in an ascending
 *   sort (NULLS FIRST, as SQLite), so a cursor means the same row on either store.
 * - FTS5's trigram MATCH becomes ILIKE over messages_content_trgm (a superset, as FTS5's folding
 *   was), then the exact ASCII-folded substring test keeps what SQLite keeps.
 */

type RawConv = RawConversation & { last_line: string | null; last_reply?: string | null; last_customer?: string | null; match_id?: number; match_text?: string | null; my_unread?: number };

/** SQLite's lower(): A–Z only. */
export const asciiLowerSql = (col: string): string => `translate(${col}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
const asciiLower = (text: string): string => text.replace(/[A-Z]/g, (ch) => ch.toLowerCase());
/** `text` anywhere in a field, LIKE's own wildcards escaped (console-list.ts's pattern). */
const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** Placeholders numbered as they are used: a clause says where its value goes, whatever the order of the text. */
export class PgParams {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * console-list.ts's LAST_TEXT: the last line as [role, content, source, operator name, note] and
 * the last reply after it, each as the JSON text toSummary reads. Only a command line casts its
 * message_info (as SQLite only then reads it with json_extract).
 */
export const PG_LAST_TEXT = `(SELECT (CASE WHEN m.role = 'command'
     THEN json_build_array(m.role, m.content, m.message_info::jsonb -> 'source', m.message_info::jsonb #> '{operator,name}', substr(m.message_info::jsonb ->> 'note', 1, ${TRANSCRIPT_TEXT_MAX}))
     ELSE json_build_array(m.role, m.content, m.from_user_id, (SELECT p.nickname FROM people p WHERE p.client_id = m.client_id AND p.user_id = m.from_user_id)) END)::text
   FROM messages m WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1) AS last_line,
  (SELECT json_build_array(r.kind, r.content, r.operator -> 'name')::text FROM replies r
   WHERE r.conversation_id = c.id AND r.kind <> 'suggestion' AND r.content <> ''
     AND r.after_message_id >= (SELECT coalesce(max(lm.id), 0) FROM messages lm WHERE lm.conversation_id = c.id)
   ORDER BY r.after_message_id DESC, r.id DESC LIMIT 1) AS last_reply`;

/** team.ts's UNREAD_FOR as a column of `c`, for `reader`. */
export function pgUnreadFor(p: PgParams, reader: Reader): string {
  return `(SELECT count(*) FROM (SELECT m.role, m.received_at FROM messages m WHERE m.conversation_id = c.id
     AND m.id > coalesce((SELECT rm.last_read_message_id FROM read_markers rm WHERE rm.agent_id = ${p.add(reader.id)} AND rm.conversation_id = c.id), 0)
     ORDER BY m.id DESC LIMIT ${UNREAD_WINDOW}) u WHERE u.role = 'customer' AND u.received_at >= ${p.add(reader.floor)}) AS my_unread`;
}

const LAST_CUSTOMER = `(SELECT json_build_array(m.content, coalesce((SELECT p.nickname FROM people p WHERE p.client_id = m.client_id AND p.user_id = m.from_user_id), m.from_user_id))::text
   FROM messages m WHERE m.conversation_id = c.id AND m.role = 'customer' AND m.content IS NOT NULL AND m.reply_reason IS DISTINCT FROM 'not_mentioned'
   ORDER BY m.id DESC LIMIT 1) AS last_customer`;

const BIGINTS = ['paused_until', 'created_at', 'last_message_at', 'needs_human_since', 'resolved_at', 'last_read_message_id', 'assigned_at', 'my_unread', 'match_id'] as const;

/** A conversation row as node-postgres gave it, its bigints as numbers (a pool without Switchboard's int8 parser gives text). */
export function pgConversationRow(row: Record<string, unknown>): RawConv {
  const out: Record<string, unknown> = { ...row };
  for (const key of BIGINTS) if (typeof out[key] === 'string') out[key] = int8.parse(out[key]);
  return out as unknown as RawConv;
}

export const pgSummary = (row: Record<string, unknown>): ConversationSummary => toSummary(pgConversationRow(row));

function filterClauses(p: PgParams, f: ConversationFilter): string[] {
  const where: string[] = [];
  if (f.clientId) where.push(`c.client_id = ${p.add(f.clientId)}`);
  if (f.channel) where.push(`c.channel = ${p.add(f.channel)}`);
  if (f.state === 'needs_human') where.push('c.needs_human = 1');
  else if (f.state === 'active') where.push(`(c.auto_reply = 'active' OR (c.auto_reply = 'paused' AND c.paused_until <= ${p.add(f.now)}))`);
  else if (f.state === 'paused') where.push(`c.auto_reply = 'paused' AND c.paused_until > ${p.add(f.now)}`);
  else if (f.state === 'stopped') where.push("c.auto_reply = 'stopped'");
  if (f.view === 'needs_you') {
    where.push('c.needs_human = 1');
    if (f.reader) where.push(`(c.assignee IS NULL OR c.assignee = ${p.add(f.reader.id)})`);
  }
  if (f.assignment === 'unassigned') where.push('c.assignee IS NULL');
  else if (f.assignment === 'mine') where.push(f.reader ? `c.assignee = ${p.add(f.reader.id)}` : 'FALSE');
  return where;
}

/** A 1:1 conversation's customer id and name, a group's id and name, containing the search (SQLite's LIKE: ASCII case folded). */
function fieldMatch(p: PgParams, search: string): string {
  const like = (col: string): string => `${asciiLowerSql(col)} LIKE ${p.add(asciiLower(`%${escapeLike(search)}%`))} ESCAPE '\\'`;
  return `((c.group_id IS NULL AND (${like('c.customer_id')} OR ${like('c.customer_name')})) OR ${like('c.group_id')} OR ${like('c.group_name')})`;
}

/**
 * console-list.ts's messageSearch: three or more characters through the trigram index (ILIKE on
 * the needle finds a superset of the ASCII-folded match), shorter ones over the newest
 * SHORT_SEARCH_WINDOW messages; either way the exact test is SQLite's instr(lower(content), needle).
 */
function messageMatch(p: PgParams, search: string, before: number): { where: string; needle: string } {
  const needle = search.toLowerCase();
  const exact = `strpos(${asciiLowerSql('m.content')}, ${p.add(needle)}) > 0`;
  const where =
    [...search].length >= 3
      ? `m.content ILIKE ${p.add(`%${escapeLike(needle)}%`)} AND m.id < ${p.add(before)} AND ${exact}`
      : `m.id > (SELECT coalesce(max(id), 0) FROM messages) - ${SHORT_SEARCH_WINDOW} AND m.id < ${p.add(before)} AND ${exact}`;
  return { where, needle };
}

/** One page of the console list, as console-list.ts's conversationPage. */
export async function pgConversationPage(db: PgQueryable, f: ConversationFilter): Promise<ConversationPage> {
  const needsYou = f.view === 'needs_you';
  const order = needsYou ? 'c.needs_human_since NULLS FIRST, c.id COLLATE "C"' : 'c.last_message_at DESC, c.id COLLATE "C"';
  const items: ConversationSummary[] = [];

  if (f.cursor?.k !== 'match') {
    const p = new PgParams();
    const where = filterClauses(p, f);
    if (f.cursor?.k === 'recent') {
      where.push(`c.last_message_at <= ${p.add(f.cursor.at)} AND (c.last_message_at < ${p.add(f.cursor.at)} OR c.id COLLATE "C" > ${p.add(f.cursor.id)})`);
    } else if (f.cursor?.k === 'needs') {
      where.push(`c.needs_human_since >= ${p.add(f.cursor.at)} AND (c.needs_human_since > ${p.add(f.cursor.at)} OR c.id COLLATE "C" > ${p.add(f.cursor.id)})`);
    }
    if (f.search) where.push(fieldMatch(p, f.search));
    // The page is chosen first and only its rows read their last line, as on SQLite.
    const page = `SELECT c.* FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${p.add(f.limit + 1)}`;
    const sql = `SELECT c.*, ${PG_LAST_TEXT}${f.reader ? `, ${pgUnreadFor(p, f.reader)}` : ''}${needsYou ? `, ${LAST_CUSTOMER}` : ''}
                 FROM (${page}) c ORDER BY ${order}`;
    const rows = (await db.query(sql, p.values)).rows.map(pgSummary);
    if (rows.length > f.limit) {
      const pageRows = rows.slice(0, f.limit);
      const last = pageRows.at(-1)!;
      const cursor: ListCursor = needsYou ? { k: 'needs', at: last.needsHumanSince ?? 0, id: last.id } : { k: 'recent', at: last.lastMessageAt, id: last.id };
      return { items: pageRows, nextCursor: encodeCursor(cursor) };
    }
    items.push(...rows);
    if (!f.search) return { items, nextCursor: null };
  }

  // Matching messages, newest first; each conversation once, at its newest match.
  const p = new PgParams();
  const before = f.cursor?.k === 'match' ? f.cursor.before : Number.MAX_SAFE_INTEGER;
  const text = messageMatch(p, f.search!, before);
  const want = f.limit - items.length;
  const sql = `SELECT c.*, ${PG_LAST_TEXT}${f.reader ? `, ${pgUnreadFor(p, f.reader)}` : ''}, m.id AS match_id, m.content AS match_text
               FROM messages m JOIN conversations c ON c.id = m.conversation_id
               WHERE ${text.where}
                 ${filterClauses(p, f).map((w) => `AND ${w}`).join(' ')}
                 AND ${fieldMatch(p, f.search!)} IS NOT TRUE
                 AND NOT EXISTS (SELECT 1 FROM messages n WHERE n.conversation_id = m.conversation_id AND n.id > m.id AND strpos(${asciiLowerSql('n.content')}, ${p.add(text.needle)}) > 0)
               ORDER BY m.id DESC LIMIT ${p.add(want + 1)}`;
  const rows = (await db.query(sql, p.values)).rows.map(pgConversationRow);
  const more = rows.length > want;
  const page = more ? rows.slice(0, want) : rows;
  items.push(...page.map((r) => ({ ...toSummary(r), matchText: excerpt(r.match_text ?? '', text.needle) })));
  if (want === 0) return { items, nextCursor: rows.length > 0 ? encodeCursor({ k: 'match', before: Number.MAX_SAFE_INTEGER }) : null };
  return { items, nextCursor: more ? encodeCursor({ k: 'match', before: page.at(-1)!.match_id! }) : null };
}
