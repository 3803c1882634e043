import type { Migration } from '../migrate.ts';

/** Clients, conversations, messages, replies, idempotency, replay protection, request log. */
export const migration001: Migration = {
  version: 1,
  name: 'initial',
  up(db) {
    db.exec(`
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      CREATE TABLE clients (
        id TEXT PRIMARY KEY,
        enabled INTEGER NOT NULL DEFAULT 1,
        settings TEXT NOT NULL DEFAULT '{}',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE client_secrets (
        id INTEGER PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        sealed TEXT NOT NULL,
        hint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER
      ) STRICT;
      CREATE INDEX client_secrets_active ON client_secrets(client_id) WHERE retired_at IS NULL;

      CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES clients(id),
        channel TEXT NOT NULL CHECK (channel IN ('im', 'web')),
        peer TEXT NOT NULL,
        group_id TEXT,
        customer_id TEXT,
        auto_reply TEXT NOT NULL DEFAULT 'active' CHECK (auto_reply IN ('active', 'paused', 'stopped')),
        paused_until INTEGER,
        needs_human INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        last_message_at INTEGER NOT NULL,
        UNIQUE (client_id, channel, peer)
      ) STRICT;

      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        client_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        msg_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('customer', 'staff', 'ai', 'command')),
        from_user_id TEXT,
        from_user_type INTEGER,
        content TEXT,
        message_info TEXT NOT NULL,
        create_timestamp INTEGER,
        received_at INTEGER NOT NULL,
        reply_scheduled INTEGER,
        reply_reason TEXT
      ) STRICT;
      CREATE INDEX messages_conversation ON messages(conversation_id, id);

      CREATE TABLE replies (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        kind TEXT NOT NULL CHECK (kind IN ('auto', 'website', 'suggestion')),
        msg_id TEXT NOT NULL UNIQUE,
        reply_to TEXT NOT NULL,
        after_message_id INTEGER NOT NULL,
        content TEXT NOT NULL,
        handoff INTEGER NOT NULL,
        engine TEXT NOT NULL,
        confidence REAL,
        sources TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX replies_conversation ON replies(conversation_id, after_message_id);

      -- One row per accepted request: its first response (idempotency, section 5), the message
      -- it stored (assist_dialog finds auto_dialog messages by msg_id here) and its signature
      -- (replay protection survives restarts). Indexes are few on purpose: every index is a
      -- random page written per request under synchronous=FULL, and the large rows append in
      -- rowid order while only the small key lands on a random page.
      CREATE TABLE idempotency (
        id INTEGER PRIMARY KEY,
        client_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        msg_id TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        status INTEGER NOT NULL,
        response TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        message_id INTEGER,
        signature TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (client_id, event_type, msg_id)
      ) STRICT;
      CREATE INDEX idempotency_created ON idempotency(created_at);

      CREATE TABLE request_log (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        request_id TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        client_id TEXT,
        event_type TEXT,
        msg_id TEXT,
        conversation_id TEXT,
        status INTEGER NOT NULL,
        code TEXT,
        latency_ms REAL NOT NULL,
        replayed INTEGER NOT NULL DEFAULT 0,
        problem TEXT
      ) STRICT;
      CREATE INDEX request_log_at ON request_log(at);
      CREATE INDEX request_log_failed ON request_log(at) WHERE status >= 400;
    `);
  },
};
