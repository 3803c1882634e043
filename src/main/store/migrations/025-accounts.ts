import type { Migration } from '../migrate.ts';

/**
 * Team mode (protocol v1.2, section 9): agent accounts, one-time sign-in links and sessions.
 * Secrets are kept only as SHA-256 digests (links and session tokens) or scrypt hashes (passwords),
 * so a copy of the database signs nobody in. Nothing reads these tables yet besides the accounts
 * store; the console's sign-in and roles build on them.
 */
export const migration025: Migration = {
  version: 25,
  name: 'accounts',
  up(db) {
    db.exec(`
      CREATE TABLE agents (
        id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        role TEXT NOT NULL CHECK (role IN ('admin', 'agent')),
        capacity INTEGER NOT NULL DEFAULT 5 CHECK (capacity BETWEEN 0 AND 1000),
        password_hash TEXT,
        disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE sign_in_links (
        digest TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX sign_in_links_agent ON sign_in_links(agent_id);
      CREATE TABLE sessions (
        digest TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        address TEXT,
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        ended_at INTEGER,
        ended_reason TEXT
      ) STRICT;
      -- Whole, not partial: the cascade of a removed agent looks its sessions up by agent_id too.
      CREATE INDEX sessions_agent ON sessions(agent_id, ended_at);
    `);
  },
};
