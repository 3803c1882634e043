import type { Migration } from '../migrate.ts';

/**
 * Why a conversation is in Needs you, so the queue can be triaged without opening each row: a
 * handoff (a website visitor got the fallback), no confident answer, a reply that died, a flag by
 * hand, or a customer who wrote while a human had the conversation. Conversations flagged before
 * this migration keep NULL: the console then shows no reason rather than a guessed one.
 */
export const migration017: Migration = {
  version: 17,
  name: 'needs-human-reason',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN needs_human_reason TEXT
        CHECK (needs_human_reason IN ('handoff', 'no_answer', 'delivery_failed', 'flagged', 'customer_waiting'));
    `);
  },
};
