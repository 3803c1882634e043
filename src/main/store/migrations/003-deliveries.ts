import type { Migration } from '../migrate.ts';

/**
 * Auto replies and their deliveries. Each customer message records what became of its
 * scheduled reply (the trace the console shows); each reply to be sent has a delivery row,
 * written in the same transaction as the reply, and every attempt is kept.
 */
export const migration003: Migration = {
  version: 3,
  name: 'deliveries',
  up(db) {
    db.exec(`
      -- pending (waiting for its quiet period) | answered | handoff | cancelled | stale
      ALTER TABLE messages ADD COLUMN reply_outcome TEXT;
      ALTER TABLE messages ADD COLUMN reply_msg_id TEXT;
      ALTER TABLE messages ADD COLUMN reply_note TEXT;
      CREATE INDEX messages_pending_reply ON messages(conversation_id) WHERE reply_outcome = 'pending';

      ALTER TABLE replies ADD COLUMN cause TEXT;
      CREATE INDEX replies_created ON replies(created_at);

      CREATE TABLE deliveries (
        id INTEGER PRIMARY KEY,
        reply_id INTEGER NOT NULL REFERENCES replies(id),
        reply_msg_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        client_id TEXT NOT NULL,
        send_url TEXT NOT NULL,
        message_info TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'dead', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0,
        round_attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_status INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE state = 'pending';
      -- Per-conversation order ("is an older one still pending?") in one index seek.
      CREATE INDEX deliveries_pending ON deliveries(conversation_id, id) WHERE state = 'pending';
      CREATE INDEX deliveries_conversation ON deliveries(conversation_id, id);
      CREATE INDEX deliveries_state ON deliveries(state, id);

      CREATE TABLE delivery_attempts (
        id INTEGER PRIMARY KEY,
        delivery_id INTEGER NOT NULL REFERENCES deliveries(id),
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        duration_ms REAL NOT NULL,
        status INTEGER,
        error TEXT,
        outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'retry', 'dead', 'cancelled'))
      ) STRICT;
      CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id, attempt);
      CREATE INDEX delivery_attempts_started ON delivery_attempts(started_at);
    `);
  },
};
