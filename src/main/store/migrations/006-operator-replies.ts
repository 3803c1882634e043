import type { Migration } from '../migrate.ts';

/**
 * Operator replies (protocol section 7) are replies of their own kind, named by the operator, and
 * go through the same outbox; suggestions keep the agent's instruction. The kind CHECK can only
 * change by rebuilding `replies`, which deliveries reference: hence the rebuild, rows copied as
 * they are, ids kept.
 */
export const migration006: Migration = {
  version: 6,
  name: 'operator-replies',
  rebuildsReferencedTable: true,
  up(db) {
    db.exec(`
      CREATE TABLE replies_rebuilt (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        kind TEXT NOT NULL CHECK (kind IN ('auto', 'website', 'suggestion', 'operator')),
        msg_id TEXT NOT NULL UNIQUE,
        reply_to TEXT NOT NULL,
        after_message_id INTEGER NOT NULL,
        content TEXT NOT NULL,
        handoff INTEGER NOT NULL,
        engine TEXT NOT NULL,
        confidence REAL,
        sources TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        cause TEXT,
        -- {"id","name"} of the console user who sent an operator reply; only they have one.
        operator TEXT CHECK ((kind = 'operator') = (operator IS NOT NULL)),
        -- What the agent asked for when requesting a suggestion.
        instruction TEXT
      ) STRICT;
      INSERT INTO replies_rebuilt (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence, sources, created_at, cause)
        SELECT id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence, sources, created_at, cause FROM replies;
      DROP TABLE replies;
      ALTER TABLE replies_rebuilt RENAME TO replies;
      CREATE INDEX replies_conversation ON replies(conversation_id, after_message_id);
      CREATE INDEX replies_created ON replies(created_at);

      -- The outbox re-checks auto-reply state before each attempt of an auto reply only: a human's
      -- answer is never cancelled because a human took over.
      ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'auto' CHECK (kind IN ('auto', 'operator'));
    `);
  },
};
