import type { Migration } from '../migrate.ts';

/**
 * The conversations whose bot is held off (stopped or paused) and that are not in Needs you: the
 * staff-wait watch reads them once at start to set its timers again (src/main/conversations/
 * staff-wait.ts). A partial index keeps that read to those rows on a store of any size; the
 * per-message updates of a conversation (counts, times, unread) touch none of its columns, so
 * ingest does not maintain it.
 */
export const migration018: Migration = {
  version: 18,
  name: 'held-conversations-index',
  up(db) {
    db.exec("CREATE INDEX conversations_held ON conversations(id) WHERE auto_reply != 'active' AND needs_human = 0");
  },
};
