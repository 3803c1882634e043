import type { PgMigration } from '../migrate.ts';

/** Slots per counter: a backend adds to the one its process id picks, so concurrent writers seldom share a row. */
export const ROLLUP_SLOTS = 16;

/**
 * The rollups of migration 4 were hot rows: every request's request_log insert updated the one
 * request_log_rows row of its kind and its minute's stats_minutes rows, and every auto reply its
 * minute's row, each lock held until the writer's commit was flushed, so every node's requests
 * queued on them (bench/nodes: two nodes were slower than one; pg_stat_statements showed the
 * request_log insert at 29 ms on two nodes, 0.15 ms without the counters). From here the triggers
 * add to sharded rows instead, (…, slot) with slot = the backend's process id mod 16, created on
 * first use; a count is the sum over the old table (history, and what `store copy` brings) and
 * its shards, which the views stats_minutes_all and request_log_rows_all give. SQLite keeps its
 * single rows: one writer never waits on them.
 */
export const migration007: PgMigration = {
  version: 7,
  name: 'sharded-rollups',
  async up(client) {
    await client.query(`
      CREATE TABLE stats_minute_shards (
        minute bigint NOT NULL,
        metric text NOT NULL,
        slot smallint NOT NULL CHECK (slot >= 0 AND slot < ${ROLLUP_SLOTS}),
        n bigint NOT NULL,
        PRIMARY KEY (minute, metric, slot)
      );
      CREATE TABLE request_log_row_shards (
        verified smallint NOT NULL CHECK (verified IN (0, 1)),
        slot smallint NOT NULL CHECK (slot >= 0 AND slot < ${ROLLUP_SLOTS}),
        n bigint NOT NULL,
        PRIMARY KEY (verified, slot)
      );

      CREATE OR REPLACE FUNCTION stats_add(at_ms bigint, which text, amount bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO stats_minute_shards (minute, metric, slot, n) VALUES (at_ms / 60000, which, pg_backend_pid() % ${ROLLUP_SLOTS}, amount)
        ON CONFLICT (minute, metric, slot) DO UPDATE SET n = stats_minute_shards.n + excluded.n;
      $$;

      CREATE FUNCTION request_log_rows_add(kind smallint, amount bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO request_log_row_shards (verified, slot, n) VALUES (kind, pg_backend_pid() % ${ROLLUP_SLOTS}, amount)
        ON CONFLICT (verified, slot) DO UPDATE SET n = request_log_row_shards.n + excluded.n;
      $$;
      CREATE OR REPLACE FUNCTION request_log_rows_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM request_log_rows_add(c.verified, c.k) FROM (SELECT verified, count(*) AS k FROM added GROUP BY verified) c;
        RETURN NULL;
      END $$;
      CREATE OR REPLACE FUNCTION request_log_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM request_log_rows_add(c.verified, -c.k) FROM (SELECT verified, count(*) AS k FROM removed GROUP BY verified) c;
        RETURN NULL;
      END $$;
      CREATE OR REPLACE FUNCTION request_log_rows_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM request_log_rows_add(OLD.verified, -1);
        PERFORM request_log_rows_add(NEW.verified, 1);
        RETURN NULL;
      END $$;

      CREATE VIEW stats_minutes_all AS
        SELECT minute, metric, sum(n)::bigint AS n FROM (
          SELECT minute, metric, n FROM stats_minutes UNION ALL SELECT minute, metric, n FROM stats_minute_shards
        ) u GROUP BY minute, metric;
      CREATE VIEW request_log_rows_all AS
        SELECT verified, sum(n)::bigint AS n FROM (
          SELECT verified, n FROM request_log_rows UNION ALL SELECT verified, n FROM request_log_row_shards
        ) u GROUP BY verified;
    `);
  },
};
