import type { Migration } from '../migrate.ts';

/** As src/main/conversations/identity.ts reads nicknames, frozen here as of this migration. */
const NICKNAME_FIELDS = ['nickname', 'nick_name', 'from_user_name'] as const;

const nicknameSql = `CASE WHEN json_valid(m.message_info) THEN coalesce(${NICKNAME_FIELDS.map(
  (f) => `CASE WHEN json_type(m.message_info, '$.${f}') = 'text' THEN nullif(substr(trim(json_extract(m.message_info, '$.${f}')), 1, 200), '') END`,
).join(', ')}) END`;

/**
 * The console as the agent's workspace: per-conversation read marker and unread count, the
 * customer's nickname and the needs-human lifecycle on the conversation row (so the list stays
 * one indexed read), the audit of operator actions, canned replies, and the indexes the new
 * filters need. Existing conversations count as read up to now: an upgrade raises no flood of
 * unread badges.
 */
export const migration007: Migration = {
  version: 7,
  name: 'workspace',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN customer_name TEXT;
      ALTER TABLE conversations ADD COLUMN last_read_message_id INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE conversations ADD COLUMN unread INTEGER NOT NULL DEFAULT 0 CHECK (unread >= 0);
      ALTER TABLE conversations ADD COLUMN needs_human_since INTEGER;
      ALTER TABLE conversations ADD COLUMN resolved_at INTEGER;
      ALTER TABLE conversations ADD COLUMN resolved_by TEXT;
      UPDATE conversations SET
        last_read_message_id = coalesce((SELECT max(id) FROM messages WHERE conversation_id = conversations.id), 0),
        needs_human_since = CASE WHEN needs_human = 1 THEN last_message_at END,
        customer_name = (SELECT ${nicknameSql} FROM messages m
                         WHERE m.conversation_id = conversations.id AND m.role = 'customer' ORDER BY m.id DESC LIMIT 1);
      -- "Needs you": flagged conversations, longest wait first.
      CREATE INDEX conversations_needs_human ON conversations(needs_human_since) WHERE needs_human = 1;

      CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        -- NULL where no operator was set (retries and client changes do not require one).
        operator_id TEXT,
        operator_name TEXT,
        action TEXT NOT NULL CHECK (action IN ('reply', 'resolve', 'stop', 'resume', 'assist', 'retry', 'client_settings', 'operator')),
        conversation_id TEXT,
        detail TEXT
      ) STRICT;
      CREATE INDEX audit_conversation ON audit(conversation_id, id) WHERE conversation_id IS NOT NULL;

      CREATE TABLE canned_replies (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;

      -- Request log filters: each one an index seek, newest first.
      CREATE INDEX request_log_request ON request_log(request_id);
      CREATE INDEX request_log_msg ON request_log(msg_id) WHERE msg_id IS NOT NULL;
      CREATE INDEX request_log_client ON request_log(client_id, id) WHERE client_id IS NOT NULL;

      -- Deliveries that need attention, newest problem first.
      CREATE INDEX deliveries_retrying ON deliveries(updated_at) WHERE state = 'pending' AND attempts > 0;
      CREATE INDEX deliveries_dead ON deliveries(updated_at) WHERE state = 'dead';
    `);
  },
};
