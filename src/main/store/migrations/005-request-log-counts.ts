import type { Migration } from '../migrate.ts';

/**
 * Repeated refusals share one request log row: `count` requests from `at` to `last_at`. `agg_key`
 * names the row the service is still counting on (it is unique while set), `remote` is the
 * address the request came from.
 */
export const migration005: Migration = {
  version: 5,
  name: 'request-log-counts',
  up(db) {
    db.exec(`
      ALTER TABLE request_log ADD COLUMN remote TEXT;
      ALTER TABLE request_log ADD COLUMN count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1);
      ALTER TABLE request_log ADD COLUMN last_at INTEGER;
      ALTER TABLE request_log ADD COLUMN agg_key TEXT;
      CREATE UNIQUE INDEX request_log_agg ON request_log(agg_key) WHERE agg_key IS NOT NULL;
    `);
  },
};
