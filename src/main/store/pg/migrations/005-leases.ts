import type { PgMigration } from '../migrate.ts';

/**
 * Leases for several nodes sharing one database (issue 30): the outbox and the quiet-period reply
 * timers, which one SQLite process kept in its memory, become rows that a node claims for a while
 * (SELECT … FOR UPDATE SKIP LOCKED, src/main/store/pg/leases/). A node that dies stops renewing; once
 * lease_until has passed, another node claims the row and carries on.
 *
 * - deliveries gains lease_holder (the node's id), lease_until (epoch ms, as every time here) and
 *   lease_count (claims so far: a completion names the claim it answers, so a node whose lease
 *   was taken over cannot overwrite the new holder's result; > 1 also counts the at-least-once
 *   resends after a takeover). Added with constant defaults, so no table rewrite; the CHECK reads
 *   the table once under this migration's lock (all rows pass: both columns are NULL).
 * - due_replies: one row per conversation whose customer is waiting for an auto reply: when the
 *   quiet period ends (due_at) and the newest customer message it answers (last_message_id, which
 *   only moves forward). The row is the timer: any node may fire it.
 *
 * No SQLite twin: one SQLite process needs no leases (its outbox and timers live in that process).
 * The claim queries' plans are checked in src/main/store/pg/leases/pg-delivery-leases.test.ts and pg-reply-leases.test.ts.
 */
export const migration005: PgMigration = {
  version: 5,
  name: 'leases',
  async up(client) {
    await client.query(`
      ALTER TABLE deliveries
        ADD COLUMN lease_holder text,
        ADD COLUMN lease_until bigint,
        ADD COLUMN lease_count integer NOT NULL DEFAULT 0,
        ADD CONSTRAINT deliveries_lease_check CHECK ((lease_holder IS NULL) = (lease_until IS NULL));

      CREATE TABLE due_replies (
        conversation_id text PRIMARY KEY REFERENCES conversations(id),
        due_at bigint NOT NULL,
        last_message_id bigint NOT NULL,
        lease_holder text,
        lease_until bigint,
        lease_count integer NOT NULL DEFAULT 0,
        CHECK ((lease_holder IS NULL) = (lease_until IS NULL))
      );
      -- Claims walk it in due order; the leased rows among the due ones (at most what the nodes
      -- have in flight) are read and passed over.
      CREATE INDEX due_replies_due ON due_replies(due_at);
    `);
  },
};
