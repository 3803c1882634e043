import type { PgMigration } from '../migrate.ts';

/**
 * A replay run is its node's (SQLite's migration 34 adds the same): the node running it, its
 * heartbeat with the progress then, and a cancel asked by another node. Before this, a starting
 * node marked every running run failed, another node's live one too, two nodes could each run a
 * replay, and a run's progress and cancel were known only to the node running it.
 *
 * The partial unique index keeps one owned run running across the installation: a node claims a
 * run with an insert that the index refuses while another node's run is running, so two nodes
 * starting at once cannot both win. A run without an owner (one an earlier version or a copied
 * SQLite store left running) is outside the index; the claim treats it by its start time
 * (replay-queries.ts), and nothing here needs rows to change.
 */
export const migration008: PgMigration = {
  version: 8,
  name: 'replay-run-owners',
  async up(client) {
    await client.query(`
      ALTER TABLE replay_runs
        ADD COLUMN node_id text,
        ADD COLUMN heartbeat_at bigint,
        ADD COLUMN progress_done integer,
        ADD COLUMN progress_total integer,
        ADD COLUMN cancel_requested_at bigint;
      CREATE UNIQUE INDEX replay_runs_one_running ON replay_runs(status) WHERE status = 'running' AND node_id IS NOT NULL;
    `);
  },
};
