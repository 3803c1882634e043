import type { Migration } from '../migrate.ts';

/**
 * A replay run's owner (issue 30's several nodes; PostgreSQL's migration 8 adds the same): the
 * node running it, its last heartbeat with the progress then (questions done of total), and a
 * cancel asked by another node, which the owner reads at its next heartbeat.
 *
 * At most one run owned by a node is running (the partial unique index): two nodes claiming a run
 * at the same moment cannot both win. A run without an owner (SQLite's console and the CLI, which
 * start runs with none, as before; a run an earlier version started) is outside the index, so
 * nothing changes for one SQLite process: its console keeps one run at a time in memory, and the
 * CLI may run one beside it.
 */
export const migration034: Migration = {
  version: 34,
  name: 'replay-run-owners',
  up(db) {
    db.exec(`
      ALTER TABLE replay_runs ADD COLUMN node_id TEXT;
      ALTER TABLE replay_runs ADD COLUMN heartbeat_at INTEGER;
      ALTER TABLE replay_runs ADD COLUMN progress_done INTEGER;
      ALTER TABLE replay_runs ADD COLUMN progress_total INTEGER;
      ALTER TABLE replay_runs ADD COLUMN cancel_requested_at INTEGER;
      CREATE UNIQUE INDEX replay_runs_one_running ON replay_runs(status) WHERE status = 'running' AND node_id IS NOT NULL;
    `);
  },
};
