import type { Migration } from '../migrate.ts';

/**
 * The outbox shares its slots per client and per receiver (issue 27): each delivery keeps its
 * send_url's origin (scheme://host:port), and the pending ones are indexed by client, origin and
 * due time. One seek finds the next client or the next origin of a client with pending deliveries,
 * so a scan costs per lane (client and origin), not per pending row: a dead receiver's backlog is
 * never read while it holds its share. Copied here rather than imported: a migration must not
 * change when the code it once called does.
 */
function originOf(sendUrl: string): string {
  try {
    const u = new URL(sendUrl);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return `${u.protocol}//${u.hostname}:${port}`;
  } catch {
    return sendUrl;
  }
}

export const migration024: Migration = {
  version: 24,
  name: 'delivery-lanes',
  up(db) {
    db.exec("ALTER TABLE deliveries ADD COLUMN origin TEXT NOT NULL DEFAULT ''");
    // A sent delivery never goes back to pending; dead and cancelled ones may (a retry, an Undo).
    const rows = db.prepare("SELECT id, send_url FROM deliveries INDEXED BY deliveries_state WHERE state IN ('pending', 'dead', 'cancelled')").all() as Array<{ id: number; send_url: string }>;
    const set = db.prepare('UPDATE deliveries SET origin = ? WHERE id = ?');
    for (const r of rows) set.run(originOf(r.send_url), r.id);
    db.exec("CREATE INDEX deliveries_lane ON deliveries(client_id, origin, next_attempt_at) WHERE state = 'pending'");
  },
};
