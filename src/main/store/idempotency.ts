import type { Db } from './db.ts';

export interface StoredResponse {
  contentHash: string;
  status: number;
  body: string;
}

export function idempotencyQueries(db: Db) {
  const get = db.prepare('SELECT content_hash, status, response FROM idempotency WHERE client_id = ? AND event_type = ? AND msg_id = ?');
  const put = db.prepare(
    'INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertSeen = db.prepare('INSERT OR IGNORE INTO seen_signatures (client_id, signature, seen_at) VALUES (?, ?, ?)');
  const seenSince = db.prepare('SELECT client_id, signature, seen_at FROM seen_signatures WHERE seen_at >= ?');
  const pruneSeen = db.prepare('DELETE FROM seen_signatures WHERE seen_at < ?');

  return {
    get(clientId: string, eventType: string, msgId: string): StoredResponse | undefined {
      const r = get.get(clientId, eventType, msgId) as { content_hash: string; status: number; response: string } | undefined;
      return r && { contentHash: r.content_hash, status: r.status, body: r.response };
    },
    put(clientId: string, eventType: string, msgId: string, response: StoredResponse, now: number): void {
      put.run(clientId, eventType, msgId, response.contentHash, response.status, response.body, now);
    },
    recordSignature(clientId: string, signature: string, at: number): void {
      insertSeen.run(clientId, signature, at);
    },
    signaturesSince(since: number): Array<{ clientId: string; signature: string; seenAt: number }> {
      return (seenSince.all(since) as Array<{ client_id: string; signature: string; seen_at: number }>).map((r) => ({
        clientId: r.client_id,
        signature: r.signature,
        seenAt: r.seen_at,
      }));
    },
    pruneSignatures(before: number): number {
      return Number(pruneSeen.run(before).changes);
    },
  };
}

export type IdempotencyQueries = ReturnType<typeof idempotencyQueries>;
