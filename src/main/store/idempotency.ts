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
  };
}

export type IdempotencyQueries = ReturnType<typeof idempotencyQueries>;
