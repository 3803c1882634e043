import type { Store } from '../store/index.ts';
import type { WriteQueue } from '../store/write-queue.ts';
import type { ConversationRow } from '../store/conversations.ts';
import type { ContextEntry } from '../store/messages.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { Engine, ContextLine, EngineAnswer, EnginePurpose } from '../engines/engine.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';
import type { Clock } from '../../shared/clock.ts';
import { effectiveAutoReply, type AutoReplyState, type Channel } from '../../shared/conversation.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { decideReply, type Decision } from '../autoreply/decide.ts';
import { newId } from '../store/ids.ts';
import { channelOf, peerOf, senderRole, type Peer } from './identity.ts';

/** One authenticated, validated request, ready to be processed. */
export interface Accepted {
  requestId: string;
  client: ActiveClient;
  info: MessageInfo;
  /** RFC 8785 text of the message_info: every field as received, unknown ones included. */
  canonicalInfo: string;
  /** sha256 of the canonical message_info: what "same content" means for idempotency. */
  contentHash: string;
  signature: string;
}

export type Outcome =
  | { kind: 'ok'; status: 200; /** JSON text: serialized once, stored and sent as is. */ body: string; conversationId: string; msgId: string; replayed: boolean }
  | { kind: 'conflict'; msgId: string };

export class EngineTimeout extends Error {}

export interface MessageServiceOptions {
  engineTimeoutMs: number;
  defaultFallbackText: string;
  contextLines: number;
  onStored?: (eventType: string) => void;
}

const toLine = (e: ContextEntry): ContextLine => ({ role: e.role, speaker: e.speaker, content: e.content, at: e.at });

/** Section 6: the four scenarios, each committing its effects together with its idempotency record. */
export function createMessageService(store: Store, queue: WriteQueue, engine: Engine, clock: Clock, options: MessageServiceOptions) {
  const { conversations, messages, idempotency } = store;

  /** Inside a write op: the stored first response, a conflict, or nothing yet. */
  function priorOutcome(a: Accepted, msgId: string): Outcome | null {
    const prior = idempotency.get(a.client.id, a.info.event_type, msgId);
    if (!prior) return null;
    if (prior.contentHash !== a.contentHash) return { kind: 'conflict', msgId };
    return { kind: 'ok', status: 200, body: prior.body, conversationId: prior.conversationId, msgId, replayed: true };
  }

  function commit(a: Accepted, msgId: string, messageId: number, response: Record<string, unknown>, now: number): Outcome {
    const body = JSON.stringify(response);
    const conversationId = response['conversation_id'] as string;
    idempotency.put({
      clientId: a.client.id,
      eventType: a.info.event_type,
      msgId,
      contentHash: a.contentHash,
      status: 200,
      body,
      conversationId,
      messageId,
      signature: a.signature,
      at: now,
    });
    options.onStored?.(a.info.event_type);
    return { kind: 'ok', status: 200, body, conversationId, msgId, replayed: false };
  }

  function conversationFor(a: Accepted, channel: Channel, peer: Peer, now: number, initial: AutoReplyState = 'active'): ConversationRow {
    return (
      conversations.byKey(a.client.id, channel, peer.peer) ??
      conversations.create({ id: newId('conversation'), clientId: a.client.id, channel, peer: peer.peer, groupId: peer.groupId, customerId: peer.customerId, autoReply: initial, now })
    );
  }

  function insertInbound(a: Accepted, conv: ConversationRow, msgId: string, now: number, decision?: Decision): number {
    const role = a.info.event_type === 'cmd_dialog' ? 'command' : senderRole(a.info, a.client.settings.boundAccount);
    const id = messages.insert({
      conversationId: conv.id,
      clientId: a.client.id,
      eventType: a.info.event_type,
      msgId,
      role,
      fromUserId: a.info.from_user_id || null,
      fromUserType: a.info.from_user_type ?? null,
      content: a.info.content ?? null,
      messageInfo: a.canonicalInfo,
      createTimestamp: a.info.create_timestamp ?? null,
      receivedAt: now,
      replyScheduled: decision ? decision.scheduled : null,
      replyReason: decision?.reason ?? null,
    });
    conversations.touch(conv.id, 1, now);
    return id;
  }

  function autoDialog(a: Accepted): Promise<Outcome> {
    return queue.run(() => {
      const now = clock.now();
      const msgId = a.info.msg_id ?? newId('message');
      const prior = a.info.msg_id ? priorOutcome(a, msgId) : null;
      if (prior) return prior;
      const settings = a.client.settings;
      const peer = peerOf(a.info, settings.boundAccount);
      const conv = conversationFor(a, 'im', peer, now);
      let state = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
      const role = senderRole(a.info, settings.boundAccount);
      if (role === 'staff' && state !== 'stopped' && settings.pauseMinutes > 0) {
        // A human spoke: the AI steps back until the pause runs out.
        state = 'paused';
        conversations.setAutoReply(conv.id, 'paused', now + settings.pauseMinutes * 60_000);
      }
      const addressed = new Set([...(settings.boundAccount ? [settings.boundAccount] : []), ...settings.botIds]);
      const decision = decideReply({
        role,
        isGroup: peer.groupId !== null,
        groupPolicy: settings.groupPolicy,
        mentioned: (a.info.at_list ?? []).some((id) => addressed.has(id)),
        quotesOurReply: a.info.quote !== undefined && messages.isOurReply(a.client.id, a.info.quote.msg_id),
        state,
        createTimestampSeconds: a.info.create_timestamp ?? null,
        now,
        staleMinutes: settings.staleMinutes,
        autoRepliesLastMinute: () => messages.countAutoRepliesSince(conv.id, now - 60_000),
      });
      const messageId = insertInbound(a, conv, msgId, now, decision);
      const body = {
        request_id: a.requestId,
        event_type: a.info.event_type,
        conversation_id: conv.id,
        msg_id: msgId,
        auto_reply: state,
        reply: { scheduled: decision.scheduled, reason: decision.reason },
      };
      return commit(a, msgId, messageId, body, now);
    });
  }

  function cmdDialog(a: Accepted): Promise<Outcome> {
    return queue.run(() => {
      const now = clock.now();
      const msgId = a.info.msg_id ?? newId('message');
      const prior = a.info.msg_id ? priorOutcome(a, msgId) : null;
      if (prior) return prior;
      const peer = peerOf(a.info, a.client.settings.boundAccount);
      const existing = conversations.byKey(a.client.id, 'im', peer.peer);
      const previous = existing ? effectiveAutoReply(existing.autoReply, existing.pausedUntil, now) : 'none';
      const conv = existing ?? conversationFor(a, 'im', peer, now, 'stopped');
      conversations.setAutoReply(conv.id, 'stopped', null);
      const messageId = insertInbound(a, conv, msgId, now);
      const body = {
        request_id: a.requestId,
        event_type: a.info.event_type,
        conversation_id: conv.id,
        msg_id: msgId,
        command: 'stop_auto_reply',
        auto_reply: 'stopped',
        previous,
        // Deliveries arrive with the auto-reply worker; until then nothing is ever undelivered.
        cancelled_replies: 0,
      };
      return commit(a, msgId, messageId, body, now);
    });
  }

  async function askEngine(purpose: EnginePurpose, channel: Channel, isGroup: boolean, context: ContextLine[], client: ActiveClient): Promise<EngineAnswer> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new EngineTimeout(`engine ${engine.name} did not answer within ${options.engineTimeoutMs} ms`));
      }, options.engineTimeoutMs);
    });
    try {
      return await Promise.race([
        engine.answer({ purpose, channel, isGroup, context, fallbackText: client.settings.fallbackText ?? options.defaultFallbackText }, controller.signal),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  function newLine(a: Accepted, now: number): ContextLine {
    return { role: senderRole(a.info, a.client.settings.boundAccount), speaker: a.info.from_user_id || null, content: a.info.content ?? '', at: now };
  }

  /** Engine first, then one write op that re-checks idempotency: a concurrent twin wins cleanly. */
  async function answered(a: Accepted, kind: 'website' | 'suggestion'): Promise<Outcome> {
    const msgId = a.info.msg_id ?? newId('message');
    if (a.info.msg_id) {
      const prior = priorOutcome(a, msgId);
      if (prior) return prior;
    }
    const channel = channelOf(a.info.event_type);
    const peer = peerOf(a.info, a.client.settings.boundAccount);
    const now = clock.now();
    // assist_dialog on an auto_dialog message: that message's conversation, up to that message.
    const target = kind === 'suggestion' ? messages.findAutoMessage(a.client.id, msgId) : undefined;
    const existing = target ? conversations.byId(target.conversationId) : conversations.byKey(a.client.id, channel, peer.peer);
    const history = existing ? messages.context(existing.id, target ? target.id : Number.MAX_SAFE_INTEGER, options.contextLines).map(toLine) : [];
    const context = target ? history : [...history, newLine(a, now)].slice(-options.contextLines);
    const answer = await askEngine(kind === 'website' ? 'website' : 'suggestion', channel, peer.groupId !== null, context, a.client);

    return queue.run(() => {
      const at = clock.now();
      const prior = a.info.msg_id ? priorOutcome(a, msgId) : null;
      if (prior) return prior;
      const conv = existing ?? conversationFor(a, channel, peer, at);
      const afterId = target ? target.id : insertInbound(a, conv, msgId, at);
      const replyMsgId = newId(kind === 'website' ? 'reply' : 'suggestion');
      messages.insertReply({
        conversationId: conv.id,
        kind,
        msgId: replyMsgId,
        replyTo: [msgId],
        afterMessageId: afterId,
        content: answer.content,
        handoff: answer.handoff,
        engine: engine.name,
        confidence: answer.confidence,
        sources: answer.sources,
        createdAt: at,
      });
      if (kind === 'website') {
        conversations.touch(conv.id, 1, at);
        if (answer.handoff) conversations.setNeedsHuman(conv.id, true);
      }
      const base = { request_id: a.requestId, event_type: a.info.event_type, conversation_id: conv.id, msg_id: msgId };
      const reply = { msg_id: replyMsgId, content: answer.content, handoff: answer.handoff };
      const body =
        kind === 'website'
          ? { ...base, reply }
          : {
              ...base,
              context: { reused: existing !== undefined, matched_by: target ? 'msg_id' : existing ? 'peer' : null, messages: context.length },
              suggestion: reply,
            };
      return commit(a, msgId, afterId, body, at);
    });
  }

  return {
    handle(a: Accepted): Promise<Outcome> {
      switch (a.info.event_type) {
        case 'auto_dialog':
          return autoDialog(a);
        case 'cmd_dialog':
          return cmdDialog(a);
        case 'website_dialog':
          return answered(a, 'website');
        case 'assist_dialog':
          return answered(a, 'suggestion');
        default:
          return assertNever(a.info.event_type, 'event_type');
      }
    },
    /** The stored first response for an exact resend (same signature), if there is one. */
    storedResponse(clientId: string, eventType: string, msgId: string, contentHash: string): Outcome | null {
      const prior = idempotency.get(clientId, eventType, msgId);
      if (!prior || prior.contentHash !== contentHash) return null;
      return { kind: 'ok', status: 200, body: prior.body, conversationId: prior.conversationId, msgId, replayed: true };
    },
  };
}

export type MessageService = ReturnType<typeof createMessageService>;
