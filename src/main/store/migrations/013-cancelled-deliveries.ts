import type { Migration } from '../migrate.ts';

/**
 * The console's Deliveries view lists cancelled deliveries too (replies a stop or a takeover kept
 * from the customer), newest first, as it lists dead ones. Partial, like deliveries_dead: only a
 * delivery turning cancelled writes to it, never ingest.
 */
export const migration013: Migration = {
  version: 13,
  name: 'cancelled-deliveries',
  up(db) {
    db.exec("CREATE INDEX deliveries_cancelled ON deliveries(updated_at) WHERE state = 'cancelled'");
  },
};
