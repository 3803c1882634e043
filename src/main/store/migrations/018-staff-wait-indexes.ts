import type { Migration } from '../migrate.ts';

/**
 * Two partial indexes for the staff-wait watch (src/main/conversations/staff-wait.ts):
 * - the conversations whose bot is held off (stopped or paused) and that are not in Needs you, by
 *   their last message: read once at start to set the watch's timers again, only those written
 *   in lately. Kept up only for those rows: a held conversation's messages move it in the index.
 * - staff and AI lines of the IM, by conversation: "did staff say anything after this line" is
 *   then one seek from the end, however long the conversation is.
 */
export const migration018: Migration = {
  version: 18,
  name: 'staff-wait-indexes',
  up(db) {
    db.exec(`
      CREATE INDEX conversations_held ON conversations(last_message_at) WHERE auto_reply != 'active' AND needs_human = 0;
      CREATE INDEX messages_staff_lines ON messages(conversation_id, id) WHERE role IN ('staff', 'ai');
    `);
  },
};
