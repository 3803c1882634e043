import type { DatabaseSync } from 'node:sqlite';
import type { Migration } from '../migrate.ts';

/** Minutes of history the rollup keeps: a week, well past the dashboard's longest window (24 h). */
export const STATS_RETENTION_MINUTES = 7 * 24 * 60;

/** Adds `amount` to one (minute, metric) cell; a trigger statement, so NEW/OLD name the source row. */
const bump = (minute: string, metric: string, amount: string, when = 'true'): string =>
  `INSERT INTO stats_minutes (minute, metric, n) SELECT ${minute} / 60000, '${metric}', ${amount} WHERE ${when}
     ON CONFLICT (minute, metric) DO UPDATE SET n = n + excluded.n;`;

/**
 * The dashboard's per-minute counts (issue 12), kept by triggers so every writer (service, engine
 * worker, CLI, and writers added later) keeps them without code of its own; reading a window is a
 * primary-key range, whatever the number of raw rows.
 *
 * A row counts in the minute of its own time column, as the raw GROUP BY did: a request log row
 * that later counts more refusals adds them to the minute it began. Deleting source rows does not
 * subtract: pruning the request log (by age or size) leaves the dashboard's history as it happened.
 * The rollup keeps STATS_RETENTION_MINUTES before its newest minute; the service's request log
 * maintenance trims the rest in bounded batches (statsRollupPrune), off the per-write path.
 */
export const migration012: Migration = {
  version: 12,
  name: 'stats-rollup',
  up(db) {
    db.exec(`
      CREATE TABLE stats_minutes (
        minute INTEGER NOT NULL,
        -- requests | rejected | replies | handoffs | delivery_failures. Written only by the triggers
        -- below; no CHECK, as it would triple what a trigger adds to each write.
        metric TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (minute, metric)
      ) STRICT, WITHOUT ROWID;

      -- One trigger per metric, each with its WHEN: a row a metric does not count costs a test, not a statement.
      CREATE TRIGGER stats_request_log_insert AFTER INSERT ON request_log BEGIN
        ${bump('NEW.at', 'requests', 'NEW.count')}
      END;
      CREATE TRIGGER stats_request_log_insert_rejected AFTER INSERT ON request_log WHEN NEW.status >= 400 BEGIN
        ${bump('NEW.at', 'rejected', 'NEW.count')}
      END;
      -- The counting path: only the count grows.
      CREATE TRIGGER stats_request_log_count AFTER UPDATE OF count ON request_log
        WHEN NEW.count != OLD.count AND NEW.at = OLD.at AND NEW.status = OLD.status BEGIN
        ${bump('NEW.at', 'requests', 'NEW.count - OLD.count')}
        ${bump('NEW.at', 'rejected', 'NEW.count - OLD.count', 'NEW.status >= 400')}
      END;
      -- No writer moves a row's time or status today; if one does, the row moves between cells.
      CREATE TRIGGER stats_request_log_move AFTER UPDATE OF at, status ON request_log
        WHEN NEW.at != OLD.at OR NEW.status != OLD.status BEGIN
        ${bump('OLD.at', 'requests', '-OLD.count')}
        ${bump('OLD.at', 'rejected', '-OLD.count', 'OLD.status >= 400')}
        ${bump('NEW.at', 'requests', 'NEW.count')}
        ${bump('NEW.at', 'rejected', 'NEW.count', 'NEW.status >= 400')}
      END;

      CREATE TRIGGER stats_replies_insert AFTER INSERT ON replies WHEN NEW.kind = 'auto' AND NEW.handoff = 0 BEGIN
        ${bump('NEW.created_at', 'replies', '1')}
      END;
      CREATE TRIGGER stats_replies_insert_handoff AFTER INSERT ON replies WHEN NEW.handoff = 1 BEGIN
        ${bump('NEW.created_at', 'handoffs', '1')}
      END;
      CREATE TRIGGER stats_replies_move AFTER UPDATE OF kind, handoff, created_at ON replies BEGIN
        ${bump('OLD.created_at', 'replies', '-1', "OLD.kind = 'auto' AND OLD.handoff = 0")}
        ${bump('OLD.created_at', 'handoffs', '-1', 'OLD.handoff = 1')}
        ${bump('NEW.created_at', 'replies', '1', "NEW.kind = 'auto' AND NEW.handoff = 0")}
        ${bump('NEW.created_at', 'handoffs', '1', 'NEW.handoff = 1')}
      END;

      CREATE TRIGGER stats_delivery_attempts_insert AFTER INSERT ON delivery_attempts
        WHEN NEW.outcome IN ('retry', 'dead') BEGIN
        ${bump('NEW.started_at', 'delivery_failures', '1')}
      END;
      CREATE TRIGGER stats_delivery_attempts_move AFTER UPDATE OF outcome, started_at ON delivery_attempts BEGIN
        ${bump('OLD.started_at', 'delivery_failures', '-1', "OLD.outcome IN ('retry', 'dead')")}
        ${bump('NEW.started_at', 'delivery_failures', '1', "NEW.outcome IN ('retry', 'dead')")}
      END;
    `);
    backfill(db);
  },
};

/** The last retention window of existing rows, measured back from the newest of them (exported for bench/stats.ts). */
export function backfill(db: DatabaseSync): void {
  const newest = db
    .prepare(
      `SELECT max(coalesce((SELECT max(at) FROM request_log), 0), coalesce((SELECT max(created_at) FROM replies), 0),
                  coalesce((SELECT max(started_at) FROM delivery_attempts), 0)) AS t`,
    )
    .get() as { t: number };
  const since = (Math.floor(newest.t / 60000) - STATS_RETENTION_MINUTES) * 60000;
  const fill = (metric: string, table: string, column: string, where: string, n = 'count(*)'): void => {
    db.prepare(
      `INSERT INTO stats_minutes (minute, metric, n)
         SELECT ${column} / 60000, '${metric}', ${n} FROM ${table} WHERE ${column} >= ? ${where} GROUP BY ${column} / 60000`,
    ).run(since);
  };
  fill('requests', 'request_log', 'at', '', 'sum(count)');
  fill('rejected', 'request_log', 'at', 'AND status >= 400', 'sum(count)');
  fill('replies', 'replies', 'created_at', "AND kind = 'auto' AND handoff = 0");
  fill('handoffs', 'replies', 'created_at', 'AND handoff = 1');
  fill('delivery_failures', 'delivery_attempts', 'started_at', "AND outcome IN ('retry', 'dead')");
}
