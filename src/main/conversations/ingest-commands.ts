import type { IngestStore } from '../store/contract.ts';
import type { ConversationRow } from '../store/conversations.ts';
import type { LoggedRequest } from '../store/request-log.ts';
import type { EngineAnswer } from '../engines/engine.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { effectiveAutoReply, type AutoReplyState, type Channel, type MessageRole } from '../../shared/conversation.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { decideReply, waitsForHuman, type Decision, type DecisionInput } from '../autoreply/decide.ts';
import { newId } from '../store/ids.ts';
import { channelOf, displayNamesOf, fromStaffSide, peerOf, senderRole, type Peer } from './identity.ts';
import { stopConversation } from './state-commands.ts';

/** An authenticated, validated request as plain data: it crosses to the writer thread. */
export interface IngestRequest {
  requestId: string;
  clientId: string;
  settings: ClientSettings;
  info: MessageInfo;
  /** RFC 8785 text of the message_info: every field as received, unknown ones included. */
  canonicalInfo: string;
  /** sha256 of canonicalInfo: what "same content" means for idempotency. */
  contentHash: string;
  signature: string;
  now: number;
}

/** What an engine answered, decided on the main thread before the write. */
export interface AnsweredReply {
  kind: 'website' | 'suggestion';
  msgId: string;
  /** assist_dialog on an auto_dialog message: that message, which is not appended again. */
  targetMessageId: number | null;
  existingConversationId: string | null;
  contextMessages: number;
  engine: string;
  answer: EngineAnswer;
}

export type IngestAlert = 'handoff' | 'customer_waiting';

export type Outcome =
  | {
      kind: 'ok';
      status: 200;
      /** JSON text: serialized once, stored and sent as is. */
      body: string;
      conversationId: string;
      msgId: string;
      replayed: boolean;
      /** An auto_dialog message now waits for its reply: the scheduler takes over. */
      replyScheduled?: boolean;
      /**
       * The conversation newly needs a human: a website handoff, or a customer writing while a
       * human has it (auto-reply stopped or paused). The console alerts once.
       */
      alert?: IngestAlert;
      /** A customer wrote while staff in the IM hold the conversation: the staff-wait watch starts. */
      waitsOnStaff?: boolean;
    }
  | { kind: 'conflict'; msgId: string };

/** The stored first response for (client, event_type, msg_id), a conflict, or nothing yet. */
export async function priorOutcome(store: { idempotency: Pick<IngestStore['idempotency'], 'get'> }, r: Pick<IngestRequest, 'clientId' | 'info' | 'contentHash'>, msgId: string): Promise<Outcome | null> {
  const prior = await store.idempotency.get(r.clientId, r.info.event_type, msgId);
  if (!prior) return null;
  if (prior.contentHash !== r.contentHash) return { kind: 'conflict', msgId };
  return { kind: 'ok', status: 200, body: prior.body, conversationId: prior.conversationId, msgId, replayed: true };
}

async function commit(store: IngestStore, r: IngestRequest, msgId: string, messageId: number, response: Record<string, unknown>): Promise<Outcome> {
  const body = JSON.stringify(response);
  const conversationId = response['conversation_id'] as string;
  await store.idempotency.put({
    clientId: r.clientId,
    eventType: r.info.event_type,
    msgId,
    contentHash: r.contentHash,
    status: 200,
    body,
    conversationId,
    messageId,
    signature: r.signature,
    at: r.now,
  });
  return { kind: 'ok', status: 200, body, conversationId, msgId, replayed: false };
}

async function conversationFor(store: IngestStore, r: IngestRequest, channel: Channel, peer: Peer, initial: AutoReplyState = 'active'): Promise<ConversationRow> {
  return (
    await store.conversations.byKey(r.clientId, channel, peer.peer) ??
    await store.conversations.create({
      id: newId('conversation'),
      clientId: r.clientId,
      channel,
      peer: peer.peer,
      groupId: peer.groupId,
      customerId: peer.customerId,
      autoReply: initial,
      now: r.now,
    })
  );
}

async function insertInbound(store: IngestStore, r: IngestRequest, conv: ConversationRow, msgId: string, decision?: Decision): Promise<number> {
  const role = r.info.event_type === 'cmd_dialog' ? 'command' : senderRole(r.info, r.settings.boundAccount);
  const id = await store.messages.insert({
    conversationId: conv.id,
    clientId: r.clientId,
    eventType: r.info.event_type,
    msgId,
    role,
    fromUserId: r.info.from_user_id || null,
    fromUserType: r.info.from_user_type ?? null,
    content: r.info.content ?? null,
    messageInfo: r.canonicalInfo,
    createTimestamp: r.info.create_timestamp ?? null,
    receivedAt: r.now,
    replyScheduled: decision ? decision.scheduled : null,
    replyReason: decision?.reason ?? null,
  });
  // The list shows unread counts and names from the conversation row alone: kept here, per message.
  const names = await rememberNames(store, r, conv, role);
  if (role === 'customer') await store.conversations.touchCustomer(conv.id, r.now, names.customer, names.group);
  else {
    await store.conversations.touch(conv.id, 1, r.now);
    if (names.customer !== null || names.group !== null) await store.conversations.rename(conv.id, names.customer, names.group);
  }
  return id;
}

/**
 * Protocol v1.2's display names, the latest sent winning: every (user id, nickname) pair a
 * message carries goes to `people`; returned are the conversation row's new names, null where
 * the message changes nothing (most messages repeat the names they carried before).
 */
async function rememberNames(store: IngestStore, r: IngestRequest, conv: ConversationRow, role: MessageRole): Promise<{ customer: string | null; group: string | null }> {
  const names = displayNamesOf(r.info as unknown as Record<string, unknown>);
  const from = r.info.from_user_id || null;
  const to = r.info.to_user_id ?? null;
  if (from && names.from) await store.people.remember(r.clientId, from, names.from, r.now);
  if (to && names.to) await store.people.remember(r.clientId, to, names.to, r.now);
  // A 1:1 conversation is named by its customer, by their own word or by staff and AI writing to
  // them. A group has members, not a customer: it is named by group_name alone.
  const customer =
    conv.groupId !== null ? null : role === 'customer' ? names.from : to !== null && to === conv.customerId && fromStaffSide(r.info, r.settings.boundAccount) ? names.to : null;
  const group = conv.groupId !== null ? names.group : null;
  return { customer: customer !== conv.customerName ? customer : null, group: group !== conv.groupName ? group : null };
}

async function autoDialog(store: IngestStore, r: IngestRequest): Promise<Outcome> {
  const msgId = r.info.msg_id ?? newId('message');
  const prior = r.info.msg_id ? await priorOutcome(store, r, msgId) : null;
  if (prior) return prior;
  const settings = r.settings;
  const peer = peerOf(r.info, settings.boundAccount);
  const conv = await conversationFor(store, r, 'im', peer);
  let state = effectiveAutoReply(conv.autoReply, conv.pausedUntil, r.now);
  const role = senderRole(r.info, settings.boundAccount);
  if (role === 'staff' && state !== 'stopped' && settings.pauseMinutes > 0) {
    // A human spoke: the AI steps back until the pause runs out.
    state = 'paused';
    await store.conversations.setAutoReply(conv.id, 'paused', r.now + settings.pauseMinutes * 60_000);
  }
  // Staff answered in the IM itself: the conversation no longer waits for a human.
  if (role === 'staff') await store.conversations.clearNeedsHuman(conv.id);
  const addressed = new Set([...(settings.boundAccount ? [settings.boundAccount] : []), ...settings.botIds]);
  const input: DecisionInput = {
    role,
    isGroup: peer.groupId !== null,
    groupPolicy: settings.groupPolicy,
    mentioned: (r.info.at_list ?? []).some((id) => addressed.has(id)),
    quotesOurReply: r.info.quote !== undefined && await store.messages.isOurReply(r.clientId, r.info.quote.msg_id),
    state,
    createTimestampSeconds: r.info.create_timestamp ?? null,
    now: r.now,
    staleMinutes: settings.staleMinutes,
    autoRepliesLastMinute: 0,
  };
  // The rate limit is the last rule: count the conversation's recent replies only when it decides.
  const unlimited = decideReply(input);
  const decision = unlimited.scheduled ? decideReply({ ...input, autoRepliesLastMinute: await store.messages.countAutoRepliesSince(conv.id, r.now - 60_000) }) : unlimited;
  const messageId = await insertInbound(store, r, conv, msgId, decision);
  // Held off by the console (its stop, or an operator's reply): nobody else will answer it, so the
  // conversation goes to Needs you, as a handoff does. Staff who took it over in the IM see the
  // message there; the console would only chime at every line of their chat. The response is as
  // before (section 6): the flag is the console's business, not the integrator's.
  // Held by staff in the IM, it waits on them: the console is told only if nobody answers in
  // time (staffWaitMinutes; src/main/conversations/staff-wait.ts).
  const held = (state === 'stopped' || state === 'paused') && waitsForHuman(decision.reason) ? state : null;
  const byConsole = held !== null && await store.workspace.heldByConsole(conv.id, held);
  const alert = byConsole && await store.conversations.flagNeedsHuman(conv.id, r.now, 'customer_waiting');
  const waitsOnStaff = held !== null && !byConsole;
  const outcome = await commit(store, r, msgId, messageId, {
    request_id: r.requestId,
    event_type: r.info.event_type,
    conversation_id: conv.id,
    msg_id: msgId,
    auto_reply: state,
    reply: { scheduled: decision.scheduled, reason: decision.reason },
  });
  if (outcome.kind !== 'ok') return outcome;
  if (alert) return { ...outcome, replyScheduled: decision.scheduled, alert: 'customer_waiting' };
  return waitsOnStaff ? { ...outcome, replyScheduled: decision.scheduled, waitsOnStaff } : { ...outcome, replyScheduled: decision.scheduled };
}

async function cmdDialog(store: IngestStore, r: IngestRequest): Promise<Outcome> {
  const msgId = r.info.msg_id ?? newId('message');
  const prior = r.info.msg_id ? await priorOutcome(store, r, msgId) : null;
  if (prior) return prior;
  const peer = peerOf(r.info, r.settings.boundAccount);
  const existing = await store.conversations.byKey(r.clientId, 'im', peer.peer);
  const previous = existing ? effectiveAutoReply(existing.autoReply, existing.pausedUntil, r.now) : 'none';
  const conv = existing ?? await conversationFor(store, r, 'im', peer, 'stopped');
  const stopped = await stopConversation(store, conv.id, r.now, 'stop_auto_reply');
  const messageId = await insertInbound(store, r, conv, msgId);
  const outcome = await commit(store, r, msgId, messageId, {
    request_id: r.requestId,
    event_type: r.info.event_type,
    conversation_id: conv.id,
    msg_id: msgId,
    command: 'stop_auto_reply',
    auto_reply: 'stopped',
    previous,
    cancelled_replies: stopped.deliveries,
  });
  // Staff took over with a customer line still unanswered (its reply not made, or not sent): it now waits on them.
  const unanswered = stopped.messageIds.length > 0 || stopped.deliveries > 0;
  return outcome.kind === 'ok' && unanswered ? { ...outcome, waitsOnStaff: true } : outcome;
}

/** Appends the question (unless it is the assisted message itself) and the engine's answer. */
async function answered(store: IngestStore, r: IngestRequest, reply: AnsweredReply): Promise<Outcome> {
  // A concurrent twin may have committed while the engine worked: it wins cleanly.
  const prior = r.info.msg_id ? await priorOutcome(store, r, reply.msgId) : null;
  if (prior) return prior;
  const channel = channelOf(r.info.event_type);
  const existing = reply.existingConversationId ? await store.conversations.byId(reply.existingConversationId) : undefined;
  const conv = existing ?? await conversationFor(store, r, channel, peerOf(r.info, r.settings.boundAccount));
  const afterId = reply.targetMessageId ?? await insertInbound(store, r, conv, reply.msgId);
  const replyMsgId = newId(reply.kind === 'website' ? 'reply' : 'suggestion');
  await store.messages.insertReply({
    conversationId: conv.id,
    kind: reply.kind,
    msgId: replyMsgId,
    replyTo: [reply.msgId],
    afterMessageId: afterId,
    content: reply.answer.content,
    handoff: reply.answer.handoff,
    engine: reply.engine,
    confidence: reply.answer.confidence,
    sources: reply.answer.sources,
    // An answer's cause says how it was made when that matters (matched by words only: embeddings down).
    cause: reply.answer.handoff ? (reply.answer.cause ?? 'no confident answer') : (reply.answer.cause ?? null),
    createdAt: r.now,
  });
  let alert = false;
  if (reply.kind === 'website') {
    await store.conversations.touch(conv.id, 1, r.now);
    if (reply.answer.handoff) alert = await store.conversations.flagNeedsHuman(conv.id, r.now, 'handoff');
  }
  const base = { request_id: r.requestId, event_type: r.info.event_type, conversation_id: conv.id, msg_id: reply.msgId };
  const answer = { msg_id: replyMsgId, content: reply.answer.content, handoff: reply.answer.handoff };
  const matchedBy = reply.targetMessageId !== null ? 'msg_id' : reply.existingConversationId ? 'peer' : null;
  const body =
    reply.kind === 'website'
      ? { ...base, reply: answer }
      : { ...base, context: { reused: matchedBy !== null, matched_by: matchedBy, messages: reply.contextMessages }, suggestion: answer };
  const outcome = await commit(store, r, reply.msgId, afterId, body);
  return alert && outcome.kind === 'ok' ? { ...outcome, alert: 'handoff' } : outcome;
}

/** The commands of the endpoint's requests: what a node runs for each message (both stores: IngestStore). */
export type IngestCommand =
  | { kind: 'auto_dialog'; request: IngestRequest }
  | { kind: 'cmd_dialog'; request: IngestRequest }
  | { kind: 'answered'; request: IngestRequest; reply: AnsweredReply }
  | { kind: 'request_log'; entry: LoggedRequest; aggKey?: string }
  | { kind: 'request_log_count'; aggKey: string; count: number; lastAt: number; close: boolean };

/** Runs one ingest command inside the caller's transaction. */
export async function executeIngest(store: IngestStore, command: IngestCommand): Promise<Outcome | null> {
  switch (command.kind) {
    case 'auto_dialog':
      return autoDialog(store, command.request);
    case 'cmd_dialog':
      return cmdDialog(store, command.request);
    case 'answered':
      return answered(store, command.request, command.reply);
    case 'request_log':
      await store.requestLog.insert(command.entry, command.aggKey ?? null);
      return null;
    case 'request_log_count':
      await store.requestLog.addToAggregate(command.aggKey, command.count, command.lastAt, command.close);
      return null;
    default:
      return assertNever(command, 'ingest command');
  }
}
