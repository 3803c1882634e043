import type { Migration } from '../migrate.ts';

/**
 * Indexes for queries that scanned a big table (issue 12): transcripts join replies to their
 * deliveries by reply_id, and start-up restores pending replies in message order.
 */
export const migration008: Migration = {
  version: 8,
  name: 'hot-path-indexes',
  up(db) {
    db.exec(`
      CREATE INDEX deliveries_reply ON deliveries(reply_id);
      CREATE INDEX messages_pending_order ON messages(id) WHERE reply_outcome = 'pending';
    `);
  },
};
