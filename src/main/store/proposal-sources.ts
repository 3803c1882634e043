import type { Db } from './db.ts';

/** A reply as the proposer weighs it: the bot's (auto, website) or an operator's. */
export interface LastReply {
  kind: 'auto' | 'website' | 'operator';
  msgId: string;
  /** Customer messages it answered (msg_id). */
  replyTo: string[];
  afterMessageId: number;
  content: string;
  /** Said nothing to the customer: a handoff, or a reply never made (cancelled, failed). */
  handoff: boolean;
  cause: string | null;
}

export interface SourceMessage {
  msgId: string;
  content: string | null;
  fromUserId: string | null;
}

/**
 * The reads behind a knowledge-base proposal: what the bot last did in a conversation and what
 * the customer asked. Each walks one conversation's indexes, so its cost follows that conversation.
 */
export function proposalSourceQueries(db: Db) {
  const lastReply = db.prepare(
    `SELECT kind, msg_id, reply_to, after_message_id, content, handoff, cause FROM replies
     WHERE conversation_id = ? AND kind != 'suggestion' AND msg_id != ? ORDER BY after_message_id DESC, id DESC LIMIT 1`,
  );
  const botSince = db.prepare(
    `SELECT handoff, cause FROM replies WHERE conversation_id = ? AND kind IN ('auto', 'website') AND after_message_id >= ? ORDER BY id DESC LIMIT 1`,
  );
  const spokeAfter = db.prepare("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ? AND id > ? AND role IN ('customer', 'staff')) AS spoke");
  const byMsgIds = db.prepare(
    `SELECT msg_id, content, from_user_id FROM messages WHERE conversation_id = ? AND role = 'customer' AND msg_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const botReplies = db.prepare(
    `SELECT msg_id, handoff, cause FROM replies WHERE conversation_id = ? AND kind IN ('auto', 'website') AND msg_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const customers = db.prepare("SELECT DISTINCT from_user_id FROM messages WHERE conversation_id = ? AND role = 'customer' AND from_user_id IS NOT NULL LIMIT 50");

  return {
    /** The conversation's latest reply other than `exceptMsgId` (the operator reply being learned from). */
    lastReply(conversationId: string, exceptMsgId: string): LastReply | null {
      const r = lastReply.get(conversationId, exceptMsgId) as
        | { kind: LastReply['kind']; msg_id: string; reply_to: string; after_message_id: number; content: string; handoff: number; cause: string | null }
        | undefined;
      if (!r) return null;
      const replyTo = JSON.parse(r.reply_to) as unknown;
      return {
        kind: r.kind,
        msgId: r.msg_id,
        replyTo: Array.isArray(replyTo) ? replyTo.filter((x): x is string => typeof x === 'string') : [],
        afterMessageId: r.after_message_id,
        content: r.content,
        handoff: r.handoff === 1,
        cause: r.cause,
      };
    },
    /** The bot's latest decision on the customer's messages from `messageId` on: handed off (or made nothing), answered, or none yet. */
    botDecisionSince(conversationId: string, messageId: number): 'handoff' | 'answered' | null {
      const r = botSince.get(conversationId, messageId) as { handoff: number; cause: string | null } | undefined;
      if (!r) return null;
      return r.handoff === 1 || r.cause !== null ? 'handoff' : 'answered';
    },
    /** Whether the customer or staff wrote after message `messageId`. */
    spokeAfter(conversationId: string, messageId: number): boolean {
      return (spokeAfter.get(conversationId, messageId) as { spoke: number }).spoke === 1;
    },
    /** The conversation's customer messages with these msg_ids, oldest first. */
    customerMessages(conversationId: string, msgIds: readonly string[]): SourceMessage[] {
      if (msgIds.length === 0) return [];
      return (byMsgIds.all(conversationId, JSON.stringify(msgIds)) as Array<{ msg_id: string; content: string | null; from_user_id: string | null }>).map((r) => ({
        msgId: r.msg_id,
        content: r.content,
        fromUserId: r.from_user_id,
      }));
    },
    /** The conversation's bot replies with these msg_ids; `answered`: it said something (not a handoff, not failed). */
    botReplies(conversationId: string, msgIds: readonly string[]): Array<{ msgId: string; answered: boolean }> {
      if (msgIds.length === 0) return [];
      return (botReplies.all(conversationId, JSON.stringify(msgIds)) as Array<{ msg_id: string; handoff: number; cause: string | null }>).map((r) => ({
        msgId: r.msg_id,
        answered: r.handoff === 0 && r.cause === null,
      }));
    },
    /** Who wrote as a customer in the conversation (their ids; names are in people). */
    customerIds(conversationId: string): string[] {
      return (customers.all(conversationId) as Array<{ from_user_id: string }>).map((r) => r.from_user_id);
    },
  };
}
