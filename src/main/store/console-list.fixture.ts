import { DatabaseSync } from 'node:sqlite';
import { migrate } from './migrate.ts';
import { SHORT_SEARCH_WINDOW, type ConversationFilter } from './console-list.ts';
import { searchIndexQueries } from './search-index.ts';

// Test and bench data for the console list (console-list.test.ts, bench/list-query.ts); not imported by the app.

/** A store of `n` conversations × `per` messages, written directly; ties in last_message_at on purpose. */
export function seedList(db: DatabaseSync, n: number, per: number): void {
  migrate(db);
  db.exec('BEGIN');
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0), ('b', 0, 0)").run();
  const conv = db.prepare(
    `INSERT INTO conversations (id, client_id, channel, peer, customer_id, customer_name, auto_reply, paused_until, needs_human, needs_human_since, created_at, last_message_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
  );
  const msg = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES (?, ?, 'auto_dialog', ?, 'customer', ?, '{}', ?)");
  const states = ['active', 'paused', 'stopped'] as const;
  let m = 0;
  for (let i = 0; i < n; i++) {
    const id = `c${i}`;
    const client = i % 3 === 0 ? 'b' : 'a';
    const needs = i % 7 === 0 ? 1 : 0;
    conv.run(id, client, i % 2 ? 'im' : 'web', `u:${i}`, `cust-${i}`, i % 11 === 0 ? `Name ${i}` : null, states[i % 3]!, i % 3 === 1 ? (i % 6 === 1 ? 500 : 1500) : null,
      needs, needs ? (i * 37) % 400 : null, Math.floor(i / 3));
    for (let k = 0; k < per; k++) msg.run(id, client, `m${++m}`, k === per - 1 && i % 5 === 0 ? null : `order ${i} note ${k} ${i % 13 === 0 ? 'refund 退款' : 'hello'}`, m);
  }
  searchIndexQueries(db).flushQueue();
  db.exec('COMMIT');
}

/** The message-search subquery as it was before issue 12's paging: every matching conversation, as a set. */
export function oldMessageSearch(search: string): { sql: string; args: string[] } {
  const needle = search.toLowerCase();
  if ([...search].length >= 3) {
    return {
      sql: `SELECT m.conversation_id FROM messages_fts f JOIN messages m ON m.id = f.rowid
            WHERE messages_fts MATCH ? AND instr(lower(m.content), ?) > 0`,
      args: [`"${search.replaceAll('"', '""')}"`, needle],
    };
  }
  return {
    sql: `SELECT conversation_id FROM messages
          WHERE id > (SELECT coalesce(max(id), 0) FROM messages) - ${SHORT_SEARCH_WINDOW} AND instr(lower(content), ?) > 0`,
    args: [needle],
  };
}

/** The list query as it was before issue 12: the last message for every row, then sort and cut. */
export function oldList(db: DatabaseSync, f: ConversationFilter): unknown[] {
  const lastText = `(SELECT content FROM messages m WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1) AS last_text`;
  const where: string[] = [];
  const args: Array<string | number> = [];
  const add = (clause: string, ...values: Array<string | number>): void => {
    where.push(clause);
    args.push(...values);
  };
  if (f.clientId) add('c.client_id = ?', f.clientId);
  if (f.channel) add('c.channel = ?', f.channel);
  if (f.state === 'needs_human') add('c.needs_human = 1');
  else if (f.state === 'active') add("(c.auto_reply = 'active' OR (c.auto_reply = 'paused' AND c.paused_until <= ?))", f.now);
  else if (f.state === 'paused') add("c.auto_reply = 'paused' AND c.paused_until > ?", f.now);
  else if (f.state === 'stopped') add("c.auto_reply = 'stopped'");
  if (f.view === 'needs_you') add('c.needs_human = 1');
  if (f.search) {
    const pattern = `%${f.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    const text = oldMessageSearch(f.search);
    add(`(c.customer_id LIKE ? ESCAPE '\\' OR c.customer_name LIKE ? ESCAPE '\\' OR c.group_id LIKE ? ESCAPE '\\' OR c.id IN (${text.sql}))`, pattern, pattern, pattern, ...text.args);
  }
  const order = f.view === 'needs_you' ? 'c.needs_human_since, c.id' : 'c.last_message_at DESC, c.id';
  return db.prepare(`SELECT c.*, ${lastText} FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`).all(...args, f.limit);
}

export const FILTERS: Array<Omit<ConversationFilter, 'now'>> = [
  { limit: 50 }, { limit: 1 }, { limit: 20_000 }, { clientId: 'b', limit: 200 }, { channel: 'web', limit: 200 },
  { state: 'active', limit: 300 }, { state: 'paused', limit: 300 }, { state: 'stopped', limit: 300 }, { state: 'needs_human', limit: 100 },
  { view: 'needs_you', limit: 100 }, { view: 'needs_you', clientId: 'a', limit: 40 }, { search: 'refund', limit: 100 }, { search: '退款', limit: 30 },
  { search: 'Name 1', limit: 100 }, { search: 'cust-12', channel: 'im', limit: 100 }, { search: 'hello', state: 'paused', clientId: 'a', limit: 75 },
  { clientId: 'nobody', limit: 50 },
];
