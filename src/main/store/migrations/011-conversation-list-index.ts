import type { Migration } from '../migrate.ts';

/**
 * The console list's sort key (issue 12): newest activity first, ties by id. With the index in
 * the list's own order, a page is read off the front of the index and stops at its limit instead
 * of sorting every conversation.
 */
export const migration011: Migration = {
  version: 11,
  name: 'conversation-list-index',
  up(db) {
    db.exec('CREATE INDEX conversations_recent ON conversations(last_message_at DESC, id)');
  },
};
