import type { Migration } from '../migrate.ts';

/**
 * Migration 18 indexed the held conversations by id; the staff-wait watch reads them at start
 * only if written in lately, so the index is by their last message now (kept up only for held
 * rows: their messages move them in it). And the lines that answer a waiting customer in the IM
 * or end the wait (staff and AI lines, the console's Resume), by conversation: "did anyone answer
 * after this line" is one seek from the end, however long the conversation is.
 */
export const migration019: Migration = {
  version: 19,
  name: 'staff-wait-indexes',
  up(db) {
    db.exec(`
      DROP INDEX conversations_held;
      CREATE INDEX conversations_held ON conversations(last_message_at) WHERE auto_reply != 'active' AND needs_human = 0;
      CREATE INDEX messages_answer_lines ON messages(conversation_id, id)
        WHERE role IN ('staff', 'ai') OR (role = 'command' AND content = 'resume_auto_reply');
    `);
  },
};
