import type { Migration } from '../migrate.ts';

/**
 * The team workflow (protocol v1.2, "Team workflow"): a conversation's one assignee, private notes,
 * and read markers per account.
 *
 * - `conversations.assignee` names an account; it follows an owner whose id changes (ON UPDATE) and
 *   is cleared when the account is removed. Two partial indexes: one account's conversations by
 *   recent activity (the Mine view), and the ones still needing a human per account (capacity,
 *   counted at every claim).
 * - `notes` is a table of its own, not a kind of reply: a note can then never have a delivery (the
 *   outbox's rows reference replies) nor reach an engine's context (which reads replies). Its place
 *   in the transcript is after the newest message and reply there were when it was written.
 * - `read_markers`: what each account has seen of each conversation. The one marker the store had
 *   (conversations.last_read_message_id, shared by everyone) was the owner's: it is carried over as
 *   theirs, and stays for a console that has no account yet (a fresh install before "who are you").
 */
export const migration028: Migration = {
  version: 28,
  name: 'team-workflow',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN assignee TEXT REFERENCES agents(id) ON UPDATE CASCADE ON DELETE SET NULL;
      ALTER TABLE conversations ADD COLUMN assigned_at INTEGER;
      CREATE INDEX conversations_assignee ON conversations(assignee, last_message_at DESC, id) WHERE assignee IS NOT NULL;
      CREATE INDEX conversations_open_assigned ON conversations(assignee) WHERE needs_human = 1 AND assignee IS NOT NULL;

      CREATE TABLE notes (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        msg_id TEXT NOT NULL UNIQUE,
        -- Where it sits: after this message and after the replies up to this id.
        after_message_id INTEGER NOT NULL,
        after_reply_id INTEGER NOT NULL,
        -- {"id","name"} of the account that wrote it, as it was named then.
        author TEXT NOT NULL,
        content TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 20000),
        -- Account ids it @-mentions (JSON array).
        mentions TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX notes_conversation ON notes(conversation_id, after_message_id);

      CREATE TABLE read_markers (
        agent_id TEXT NOT NULL REFERENCES agents(id) ON UPDATE CASCADE ON DELETE CASCADE,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        last_read_message_id INTEGER NOT NULL,
        PRIMARY KEY (agent_id, conversation_id)
      ) STRICT, WITHOUT ROWID;

      INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id)
        SELECT a.id, c.id, c.last_read_message_id FROM conversations c JOIN agents a ON a.owner = 1
        WHERE c.last_read_message_id > 0;
    `);
  },
};
