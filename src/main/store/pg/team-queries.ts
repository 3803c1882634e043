import type { StoreContract } from '../contract.ts';
import type { Reader } from '../team.ts';
import { ARRIVED_MAX, ARRIVED_TEXT_MAX, UNREAD_WINDOW, type ArrivedEntry, type DraftBase, type Operator } from '../../../shared/console-api.ts';
import { int8, type PgQueryable } from './pool.ts';

type Team = StoreContract['team'];

/**
 * SQLite's UNREAD_FOR (team.ts) for PostgreSQL: the caller's unread customer messages in
 * conversation `c`, as a column. `reader` and `floor` are the placeholders ($n) of the reader's
 * id and floor, so a query that binds other values first can use it too.
 */
export const pgUnreadFor = (reader: string, floor: string): string => `(SELECT count(*) FROM (SELECT m.role, m.received_at FROM messages m WHERE m.conversation_id = c.id
     AND m.id > coalesce((SELECT rm.last_read_message_id FROM read_markers rm WHERE rm.agent_id = ${reader} AND rm.conversation_id = c.id), 0)
     ORDER BY m.id DESC LIMIT ${UNREAD_WINDOW}) u WHERE u.role = 'customer' AND u.received_at >= ${floor})`;

const clipText = (text: string): string => ([...text].length > ARRIVED_TEXT_MAX ? `${[...text].slice(0, ARRIVED_TEXT_MAX - 1).join('')}…` : text);

/**
 * The team group (store/team.ts) on PostgreSQL: the same functions and results. Every change of an
 * assignee that must not race another node is one conditional UPDATE: under READ COMMITTED a
 * second writer of the same row waits for the first to commit, then re-checks the WHERE clause on
 * the row as the first left it, so two nodes can never both take one conversation. Ordering of
 * text ids uses COLLATE "C": SQLite's BINARY, whatever the database's locale.
 */
export function pgTeamQueries(db: PgQueryable): Team {
  const changed = async (text: string, values: unknown[]): Promise<boolean> => (await db.query(text, values)).rowCount === 1;
  const ids = async (text: string, values: unknown[]): Promise<string[]> => (await db.query(text, values)).rows.map((r: { id: string }) => r.id);
  const unread = async (reader: Reader, conversationId: string): Promise<number> => {
    const row = (await db.query(`SELECT ${pgUnreadFor('$1', '$2')} AS n FROM conversations c WHERE c.id = $3`, [reader.id, reader.floor, conversationId])).rows[0] as { n: unknown } | undefined;
    return row ? int8.parse(row.n) : 0;
  };
  return {
    async assigneeOf(conversationId: string): Promise<string | null | undefined> {
      const row = (await db.query('SELECT assignee FROM conversations WHERE id = $1', [conversationId])).rows[0] as { assignee: string | null } | undefined;
      return row ? row.assignee : undefined;
    },
    assign: (conversationId: string, agentId: string | null, now: number) =>
      changed('UPDATE conversations SET assignee = $1, assigned_at = $2 WHERE id = $3', [agentId, agentId === null ? null : now, conversationId]),
    // Atomic: a second node's UPDATE of the same row waits, then finds the assignee set and changes nothing.
    takeIfFree: (conversationId: string, agentId: string, now: number) =>
      changed('UPDATE conversations SET assignee = $1, assigned_at = $2 WHERE id = $3 AND assignee IS NULL', [agentId, now, conversationId]),
    /**
     * As SQLite's claim. The conversation's row settles two nodes claiming the same conversation
     * (the UPDATE's re-check). The capacity needs more: two nodes claiming two different
     * conversations for the same agent lock different rows, and each count would miss the
     * other's uncommitted claim. So the agent's row is locked first (FOR NO KEY UPDATE: it does
     * not block the foreign-key checks of conversations naming the agent); a second claim for the
     * agent waits for the first to commit, and its UPDATE, a new statement with a new snapshot
     * under READ COMMITTED, counts the first's claim.
     */
    async claim(conversationId: string, agentId: string, capacity: number, now: number): Promise<boolean> {
      await db.query('SELECT 1 FROM agents WHERE id = $1 FOR NO KEY UPDATE', [agentId]);
      return changed(
        `UPDATE conversations SET assignee = $1, assigned_at = $2
         WHERE id = $3 AND assignee IS NULL AND needs_human = 1
           AND (SELECT count(*) FROM conversations o WHERE o.assignee = $1 AND o.needs_human = 1) < $4`,
        [agentId, now, conversationId, capacity],
      );
    },
    // SQLite's RETURNING has no promised order; here by id, so every node lists them alike.
    returnToQueue: (agentId: string) =>
      ids(
        `WITH r AS (UPDATE conversations SET assignee = NULL, assigned_at = NULL WHERE assignee = $1 AND needs_human = 1 RETURNING id)
         SELECT id FROM r ORDER BY id COLLATE "C"`,
        [agentId],
      ),
    async openCounts(): Promise<Map<string, number>> {
      const r = await db.query('SELECT assignee, count(*) AS n FROM conversations WHERE needs_human = 1 AND assignee IS NOT NULL GROUP BY assignee ORDER BY assignee COLLATE "C"');
      return new Map((r.rows as Array<{ assignee: string; n: unknown }>).map((x) => [x.assignee, int8.parse(x.n)]));
    },
    async withOpen(): Promise<string[]> {
      const r = await db.query('SELECT DISTINCT assignee COLLATE "C" AS assignee FROM conversations WHERE needs_human = 1 AND assignee IS NOT NULL ORDER BY 1');
      return (r.rows as Array<{ assignee: string }>).map((x) => x.assignee);
    },
    // NULLS FIRST: SQLite sorts a missing since first, PostgreSQL last by default.
    waitingUnassigned: (limit: number) =>
      ids('SELECT id FROM conversations WHERE needs_human = 1 AND assignee IS NULL ORDER BY needs_human_since NULLS FIRST, id COLLATE "C" LIMIT $1', [limit]),
    async latestReplyId(conversationId: string): Promise<number> {
      return int8.parse((await db.query('SELECT coalesce(max(id), 0) AS id FROM replies WHERE conversation_id = $1', [conversationId])).rows[0].id);
    },
    async arrivedSince(conversationId: string, base: DraftBase, authorId: string): Promise<ArrivedEntry[]> {
      const m = await db.query(
        `SELECT m.id, m.role, m.content, m.received_at, coalesce(p.nickname, m.from_user_id) AS who
         FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
         WHERE m.conversation_id = $1 AND m.id > $2 AND m.role IN ('customer', 'staff') ORDER BY m.id LIMIT ${ARRIVED_MAX}`,
        [conversationId, base.messageId],
      );
      const messages = (m.rows as Array<{ id: unknown; role: 'customer' | 'staff'; content: string | null; received_at: unknown; who: string | null }>).map(
        (r): ArrivedEntry => ({ id: int8.parse(r.id), kind: 'message', role: r.role, by: r.who, text: clipText(r.content ?? ''), at: int8.parse(r.received_at) }),
      );
      // An operator reply is stored after the newest message there was: one made after the base is after its message.
      const p = await db.query(
        `SELECT id, content, created_at, operator->>'name' AS who FROM replies
         WHERE conversation_id = $1 AND after_message_id >= $2 AND id > $3 AND kind = 'operator' AND operator->>'id' IS DISTINCT FROM $4
         ORDER BY id LIMIT ${ARRIVED_MAX}`,
        [conversationId, base.messageId, base.replyId, authorId],
      );
      const replies = (p.rows as Array<{ id: unknown; content: string; created_at: unknown; who: string | null }>).map(
        (r): ArrivedEntry => ({ id: int8.parse(r.id), kind: 'reply', role: 'staff', by: r.who, text: clipText(r.content), at: int8.parse(r.created_at) }),
      );
      return [...messages, ...replies].sort((a, b) => a.at - b.at).slice(0, ARRIVED_MAX);
    },
    async insertNote(n: { conversationId: string; msgId: string; afterMessageId: number; afterReplyId: number; author: Operator; content: string; mentions: string[]; now: number }): Promise<number> {
      const r = await db.query(
        `INSERT INTO notes (conversation_id, msg_id, after_message_id, after_reply_id, author, content, mentions, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [n.conversationId, n.msgId, n.afterMessageId, n.afterReplyId, JSON.stringify({ id: n.author.id, name: n.author.name }), n.content, JSON.stringify(n.mentions), n.now],
      );
      return int8.parse(r.rows[0].id);
    },
    // One upsert: two nodes marking at once keep the larger marker, never move it back.
    async markRead(reader: Reader, conversationId: string, upToId: number): Promise<number> {
      await db.query(
        `INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id) VALUES ($1, $2, $3)
         ON CONFLICT (agent_id, conversation_id) DO UPDATE SET last_read_message_id = greatest(read_markers.last_read_message_id, EXCLUDED.last_read_message_id)`,
        [reader.id, conversationId, upToId],
      );
      return unread(reader, conversationId);
    },
    unread,
    async adoptSharedMarkers(agentId: string): Promise<void> {
      await db.query(
        `INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id)
         SELECT $1, id, last_read_message_id FROM conversations WHERE last_read_message_id > 0 ON CONFLICT DO NOTHING`,
        [agentId],
      );
    },
  };
}
