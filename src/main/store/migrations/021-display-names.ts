import type { Migration } from '../migrate.ts';

/**
 * As src/main/conversations/identity.ts reads names, frozen here as of this migration: the
 * service description's field first, then the names integrations used before protocol v1.2.
 */
const FROM_NAME_FIELDS = ['from_user_nickname', 'nickname', 'nick_name', 'from_user_name'] as const;

/** A text field of message_info, trimmed and cut to 200 characters, NULL when blank or not text. */
const field = (f: string): string =>
  `CASE WHEN json_type(m.message_info, '$.${f}') = 'text' THEN nullif(substr(trim(json_extract(m.message_info, '$.${f}')), 1, 200), '') END`;

const fromName = `CASE WHEN json_valid(m.message_info) THEN coalesce(${FROM_NAME_FIELDS.map(field).join(', ')}) END`;
const toName = `CASE WHEN json_valid(m.message_info) THEN ${field('to_user_nickname')} END`;
const toUser = `CASE WHEN json_valid(m.message_info) AND json_type(m.message_info, '$.to_user_id') = 'text' THEN json_extract(m.message_info, '$.to_user_id') END`;
const groupName = `CASE WHEN json_valid(m.message_info) THEN ${field('group_name')} END`;

/**
 * Protocol v1.2's display names. `people`: the latest nickname each client's users were sent
 * under (from_user_nickname for the sender, to_user_nickname for the addressee), so a line sent
 * without one (an assist_dialog often has none) and a mention still read as a name, and a new
 * name replaces the old one on every line. `conversations.group_name`: the group's title, kept on
 * the row as customer_name is, so the list stays one indexed read. Both are filled from the
 * stored messages, whose message_info kept these fields as received before this version read
 * them; customer_name is read again with from_user_nickname first.
 */
export const migration021: Migration = {
  version: 21,
  name: 'display-names',
  up(db) {
    db.exec(`
      CREATE TABLE people (
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        nickname TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (client_id, user_id)
      ) STRICT, WITHOUT ROWID;
      ALTER TABLE conversations ADD COLUMN group_name TEXT;

      -- In arrival order, so the latest name sent wins.
      INSERT INTO people (client_id, user_id, nickname, updated_at)
        SELECT client_id, user_id, name, received_at FROM (
          SELECT m.id, 0 AS side, m.client_id, m.from_user_id AS user_id, ${fromName} AS name, m.received_at
            FROM messages m WHERE m.from_user_id IS NOT NULL AND m.from_user_id != ''
          UNION ALL
          SELECT m.id, 1 AS side, m.client_id, ${toUser} AS user_id, ${toName} AS name, m.received_at FROM messages m
        ) WHERE name IS NOT NULL AND user_id IS NOT NULL AND user_id != '' ORDER BY id, side
        ON CONFLICT (client_id, user_id) DO UPDATE SET nickname = excluded.nickname, updated_at = excluded.updated_at;

      UPDATE conversations SET group_name = (
        SELECT ${groupName} FROM messages m WHERE m.conversation_id = conversations.id AND ${groupName} IS NOT NULL ORDER BY m.id DESC LIMIT 1
      ) WHERE group_id IS NOT NULL;

      -- A 1:1 conversation is named by its customer. A group has members, not a customer: until now
      -- its customer_name held whoever spoke last, beside the customer_id of whoever spoke first.
      UPDATE conversations SET customer_name = coalesce(
        (SELECT nickname FROM people p WHERE p.client_id = conversations.client_id AND p.user_id = conversations.customer_id),
        customer_name
      ) WHERE group_id IS NULL AND customer_id IS NOT NULL;
      UPDATE conversations SET customer_name = NULL WHERE group_id IS NOT NULL;
    `);
  },
};
