import type { PgMigration } from '../migrate.ts';

/**
 * The counts SQLite's triggers keep so that the dashboard and the request log's totals are point
 * reads: stats_minutes (requests, rejected, replies, handoffs, delivery_failures per minute, as
 * SQLite's migration 12) and request_log_rows (rows per kind, as its migration 22). Same rules:
 * a row that moves minute or kind moves its count; deleting request_log rows (retention) leaves
 * the minutes alone and lowers request_log_rows.
 *
 * Both are single hot rows under concurrent writers: every ingest of a minute updates the same
 * stats_minutes rows and every request_log insert the same request_log_rows row, so on PostgreSQL
 * with several nodes these writes queue on one row lock until each transaction commits. Faithful
 * first; the PostgreSQL store should measure it in bench/nodes and, if it shows, shard the
 * counters (a node or slot column summed on read).
 */
export const migration004: PgMigration = {
  version: 4,
  name: 'rollups',
  async up(client) {
    await client.query(`
      CREATE TABLE stats_minutes (
        minute bigint NOT NULL,
        -- requests | rejected | replies | handoffs | delivery_failures, written only by the
        -- triggers below (no CHECK, as in SQLite).
        metric text NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (minute, metric)
      );

      CREATE FUNCTION stats_add(at_ms bigint, which text, amount bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO stats_minutes (minute, metric, n) VALUES (at_ms / 60000, which, amount)
        ON CONFLICT (minute, metric) DO UPDATE SET n = stats_minutes.n + excluded.n;
      $$;

      CREATE FUNCTION stats_request_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM stats_add(NEW.at, 'requests', NEW.count);
          IF NEW.status >= 400 THEN PERFORM stats_add(NEW.at, 'rejected', NEW.count); END IF;
        ELSIF NEW.at <> OLD.at OR NEW.status <> OLD.status THEN
          PERFORM stats_add(OLD.at, 'requests', -OLD.count);
          IF OLD.status >= 400 THEN PERFORM stats_add(OLD.at, 'rejected', -OLD.count); END IF;
          PERFORM stats_add(NEW.at, 'requests', NEW.count);
          IF NEW.status >= 400 THEN PERFORM stats_add(NEW.at, 'rejected', NEW.count); END IF;
        ELSIF NEW.count <> OLD.count THEN
          PERFORM stats_add(NEW.at, 'requests', NEW.count - OLD.count);
          IF NEW.status >= 400 THEN PERFORM stats_add(NEW.at, 'rejected', NEW.count - OLD.count); END IF;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER stats_request_log_insert AFTER INSERT ON request_log
        FOR EACH ROW EXECUTE FUNCTION stats_request_log();
      CREATE TRIGGER stats_request_log_update AFTER UPDATE OF at, status, count ON request_log
        FOR EACH ROW WHEN (NEW.at <> OLD.at OR NEW.status <> OLD.status OR NEW.count <> OLD.count)
        EXECUTE FUNCTION stats_request_log();

      CREATE FUNCTION stats_replies() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          IF OLD.kind = 'auto' AND OLD.handoff = 0 THEN PERFORM stats_add(OLD.created_at, 'replies', -1); END IF;
          IF OLD.handoff = 1 THEN PERFORM stats_add(OLD.created_at, 'handoffs', -1); END IF;
        END IF;
        IF NEW.kind = 'auto' AND NEW.handoff = 0 THEN PERFORM stats_add(NEW.created_at, 'replies', 1); END IF;
        IF NEW.handoff = 1 THEN PERFORM stats_add(NEW.created_at, 'handoffs', 1); END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER stats_replies_insert AFTER INSERT ON replies
        FOR EACH ROW WHEN ((NEW.kind = 'auto' AND NEW.handoff = 0) OR NEW.handoff = 1) EXECUTE FUNCTION stats_replies();
      CREATE TRIGGER stats_replies_move AFTER UPDATE OF kind, handoff, created_at ON replies
        FOR EACH ROW WHEN ((OLD.kind, OLD.handoff, OLD.created_at) IS DISTINCT FROM (NEW.kind, NEW.handoff, NEW.created_at))
        EXECUTE FUNCTION stats_replies();

      CREATE FUNCTION stats_delivery_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' AND OLD.outcome IN ('retry', 'dead') THEN PERFORM stats_add(OLD.started_at, 'delivery_failures', -1); END IF;
        IF NEW.outcome IN ('retry', 'dead') THEN PERFORM stats_add(NEW.started_at, 'delivery_failures', 1); END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER stats_delivery_attempts_insert AFTER INSERT ON delivery_attempts
        FOR EACH ROW WHEN (NEW.outcome IN ('retry', 'dead')) EXECUTE FUNCTION stats_delivery_attempts();
      CREATE TRIGGER stats_delivery_attempts_move AFTER UPDATE OF outcome, started_at ON delivery_attempts
        FOR EACH ROW WHEN ((OLD.outcome, OLD.started_at) IS DISTINCT FROM (NEW.outcome, NEW.started_at))
        EXECUTE FUNCTION stats_delivery_attempts();

      CREATE TABLE request_log_rows (
        verified smallint PRIMARY KEY CHECK (verified IN (0, 1)),
        n bigint NOT NULL
      );
      INSERT INTO request_log_rows (verified, n) VALUES (0, 0), (1, 0);

      -- Per statement with transition tables: a retention DELETE of thousands of rows is one update.
      CREATE FUNCTION request_log_rows_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE request_log_rows r SET n = r.n + c.k FROM (SELECT verified, count(*) AS k FROM added GROUP BY verified) c WHERE r.verified = c.verified;
        RETURN NULL;
      END $$;
      CREATE FUNCTION request_log_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE request_log_rows r SET n = r.n - c.k FROM (SELECT verified, count(*) AS k FROM removed GROUP BY verified) c WHERE r.verified = c.verified;
        RETURN NULL;
      END $$;
      CREATE FUNCTION request_log_rows_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE request_log_rows SET n = n - 1 WHERE verified = OLD.verified;
        UPDATE request_log_rows SET n = n + 1 WHERE verified = NEW.verified;
        RETURN NULL;
      END $$;
      CREATE TRIGGER request_log_rows_insert AFTER INSERT ON request_log
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION request_log_rows_added();
      CREATE TRIGGER request_log_rows_delete AFTER DELETE ON request_log
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION request_log_rows_removed();
      -- No writer changes a row's kind today; if one does, the counts follow.
      CREATE TRIGGER request_log_rows_move AFTER UPDATE OF verified ON request_log
        FOR EACH ROW WHEN (NEW.verified <> OLD.verified) EXECUTE FUNCTION request_log_rows_moved();
    `);
  },
};
