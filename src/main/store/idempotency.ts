import type { Db } from './db.ts';

export interface StoredResponse {
  contentHash: string;
  status: number;
  body: string;
  conversationId: string;
}

export interface AcceptedRequest extends StoredResponse {
  clientId: string;
  eventType: string;
  msgId: string;
  /** The transcript message this request stored, if any. */
  messageId: number | null;
  signature: string;
  at: number;
}

export function idempotencyQueries(db: Db) {
  const get = db.prepare(
    'SELECT content_hash, status, response, conversation_id FROM idempotency WHERE client_id = ? AND event_type = ? AND msg_id = ?',
  );
  const put = db.prepare(
    `INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, conversation_id, message_id, signature, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const seenSince = db.prepare('SELECT client_id, signature, created_at FROM idempotency WHERE created_at >= ?');
  // Both read idempotency_created only: the oldest entry, and a batch of ids from the old end.
  const oldest = db.prepare('SELECT min(created_at) AS oldest FROM idempotency');
  const pruneOld = db.prepare(
    'DELETE FROM idempotency WHERE id IN (SELECT id FROM idempotency INDEXED BY idempotency_created WHERE created_at < ? LIMIT ?)',
  );

  return {
    get(clientId: string, eventType: string, msgId: string): StoredResponse | undefined {
      const r = get.get(clientId, eventType, msgId) as { content_hash: string; status: number; response: string; conversation_id: string } | undefined;
      return r && { contentHash: r.content_hash, status: r.status, body: r.response, conversationId: r.conversation_id };
    },
    put(a: AcceptedRequest): void {
      put.run(a.clientId, a.eventType, a.msgId, a.contentHash, a.status, a.body, a.conversationId, a.messageId, a.signature, a.at);
    },
    /** Signatures accepted since `since`, to refill the replay guard after a restart. */
    signaturesSince(since: number): Array<{ clientId: string; signature: string; seenAt: number }> {
      return (seenSince.all(since) as Array<{ client_id: string; signature: string; created_at: number }>).map((r) => ({
        clientId: r.client_id,
        signature: r.signature,
        seenAt: r.created_at,
      }));
    },
    /** Deletes at most `batch` records accepted before `before`; returns how many went. */
    prune(before: number, batch: number): number {
      return Number(pruneOld.run(before, batch).changes);
    },
    /** Whether prune() has anything to do; cheap (one end of an index), so the main thread can ask often. */
    needsPrune(before: number): boolean {
      const { oldest: o } = oldest.get() as { oldest: number | null };
      return o !== null && o < before;
    },
  };
}

export type IdempotencyQueries = ReturnType<typeof idempotencyQueries>;
