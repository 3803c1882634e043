import { migratePg } from './migrate.ts';
import { openPgPool } from './pool.ts';

/**
 * A node's migration at start: one node at a time (an advisory lock); the others wait, then find
 * nothing left to apply. A connection of its own, without the query time-out: a migration's DDL
 * may take longer than a request's query may.
 */
export async function migratePgAtStart(storeUrl: string, nodeId: string, log: (line: string) => void): Promise<void> {
  const migrating = openPgPool(storeUrl, { max: 1, applicationName: `switchboard ${nodeId} migrate`.slice(0, 63), queryTimeoutMs: 0, onIdleError: () => {} });
  try {
    const client = await migrating.connect();
    try {
      const migrated = await migratePg(client);
      if (migrated.applied.length > 0) log(`PostgreSQL: applied migrations ${migrated.applied.map((m) => m.version).join(', ')}`);
    } finally {
      client.release();
    }
  } finally {
    await migrating.end();
  }
}
