import type { PgMigration } from '../migrate.ts';

/**
 * Replay protection every node shares (issue 30). One SQLite process remembers the (client,
 * signature) pairs it accepted in memory (auth/replay-guard.ts) and reloads them from the
 * idempotency records at start; with several nodes, a signed request replayed to another node
 * must be refused there too, and a request carries no msg_id to make it unique on its own.
 *
 * A row is written when a node starts processing a request (the reservation: a second copy in
 * flight on any node is refused), removed when the request is refused (an honest retry after a
 * 400 or 429 is not a replay), and kept for the replay window when it is accepted. seen_at is the
 * reserving node's clock; a row older than the window may be taken again and is pruned.
 */
export const migration006: PgMigration = {
  version: 6,
  name: 'replay-signatures',
  async up(client) {
    await client.query(`
      CREATE TABLE replay_signatures (
        client_id text NOT NULL,
        signature text NOT NULL,
        seen_at bigint NOT NULL,
        PRIMARY KEY (client_id, signature)
      );
      CREATE INDEX replay_signatures_seen ON replay_signatures(seen_at);
    `);
  },
};
