import type { Writer } from '../store/worker-writer.ts';
import type { Awaitable, StoreContract } from '../store/contract.ts';
import type { QuotedLine } from '../../shared/console-api.ts';
import { contextQuote, quotedMsgId, quoteTextOf } from '../store/quotes.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import { toContextLine, type Engine, type EngineAnswer, type ContextLine } from '../engines/engine.ts';
import { askEngine, EngineTimeout } from '../engines/ask.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';
import type { Clock } from '../../shared/clock.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { newId } from '../store/ids.ts';
import { channelOf, nicknameOf, peerOf, senderRole } from './identity.ts';
import { priorOutcome, type IngestAlert, type IngestRequest, type Outcome, type WriteCommand, type WriteResult } from './write-commands.ts';
import type { IngestCommand } from './ingest-commands.ts';

/** One authenticated, validated request, ready to be processed. */
export interface Accepted {
  requestId: string;
  client: ActiveClient;
  info: MessageInfo;
  canonicalInfo: string;
  contentHash: string;
  signature: string;
}


export interface MessageServiceOptions {
  engineTimeoutMs: number;
  defaultFallbackText: string;
  contextLines: number;
  onStored?: (eventType: string, conversationId: string) => void;
  /** An auto_dialog message was stored with a scheduled reply. */
  onReplyScheduled?: (conversationId: string, clientId: string, at: number) => void;
  /** A conversation newly needs a human (a website handoff, a customer waiting for a human), after the write committed. */
  onAlert?: (conversationId: string, reason: IngestAlert) => void;
  /** A customer wrote while staff in the IM hold the conversation, after the write committed. */
  onWaitsOnStaff?: (conversationId: string) => void;
}

export type MessageWriter = Writer<WriteCommand, WriteResult>;

/** Where a command goes to be committed: the SQLite writer thread, or a PostgreSQL transaction of its own. */
export interface CommandSink {
  submit(command: IngestCommand): Promise<WriteResult | undefined | null>;
}

/**
 * What the scenarios read before they write (context, names, quotes, idempotency pre-checks):
 * the SQLite store in this thread, or PostgreSQL queries on the node's pool.
 */
export interface MessageReads {
  readonly people: Pick<StoreContract['people'], 'names'>;
  readonly quotes: (clientId: string, msgIds: Iterable<string>) => Awaitable<Map<string, QuotedLine>>;
  readonly messages: Pick<StoreContract['messages'], 'findAutoMessage' | 'context'>;
  readonly conversations: Pick<StoreContract['conversations'], 'byKey' | 'byId'>;
  readonly idempotency: Pick<StoreContract['idempotency'], 'get'>;
}


/** The message being answered, as the engine reads it: named, and with what it quotes. */
async function questionLine(store: MessageReads, a: Accepted, at: number): Promise<ContextLine> {
  const info = a.info as unknown as Record<string, unknown>;
  // A name sent with this message is the latest one; only a message without one needs the stored name.
  const sender = a.info.from_user_id;
  const name = nicknameOf(info) ?? (sender ? ((await store.people.names(a.client.id, [sender])).get(sender) ?? null) : null);
  const quoteId = quotedMsgId(info);
  const quoted = contextQuote(quoteId, quoteTextOf(info), quoteId ? (await store.quotes(a.client.id, [quoteId])).get(quoteId) : undefined);
  return {
    role: senderRole(a.info, a.client.settings.boundAccount),
    speaker: name ?? (a.info.from_user_id || null),
    ...(name ? { speakerName: name } : {}),
    content: a.info.content ?? '',
    at,
    ...(quoted ? { quoted } : {}),
  };
}

/**
 * Section 6: the four scenarios. Reads (context, idempotency pre-checks) happen here; every
 * write goes to the writer thread as a command that commits with its idempotency record.
 */
export function createMessageService(store: MessageReads, writer: CommandSink, engine: Engine, clock: Clock, options: MessageServiceOptions) {
  function ingestRequest(a: Accepted): IngestRequest {
    return {
      requestId: a.requestId,
      clientId: a.client.id,
      settings: a.client.settings,
      info: a.info,
      canonicalInfo: a.canonicalInfo,
      contentHash: a.contentHash,
      signature: a.signature,
      now: clock.now(),
    };
  }

  async function write(command: IngestCommand, eventType: string): Promise<Outcome> {
    const outcome = await writer.submit(command);
    if (!outcome || (outcome.kind !== 'ok' && outcome.kind !== 'conflict')) throw new Error(`writer returned no outcome for ${command.kind}`);
    if (outcome.kind === 'ok' && !outcome.replayed) options.onStored?.(eventType, outcome.conversationId);
    if (outcome.kind === 'ok' && outcome.alert) options.onAlert?.(outcome.conversationId, outcome.alert);
    if (outcome.kind === 'ok' && outcome.waitsOnStaff) options.onWaitsOnStaff?.(outcome.conversationId);
    return outcome;
  }

  /** website_dialog and assist_dialog: context, engine, then one write that re-checks idempotency. */
  async function answered(a: Accepted, kind: 'website' | 'suggestion'): Promise<Outcome> {
    const msgId = a.info.msg_id ?? newId('message');
    if (a.info.msg_id) {
      const prior = await priorOutcome(store, { clientId: a.client.id, info: a.info, contentHash: a.contentHash }, msgId);
      if (prior) return prior;
    }
    const channel = channelOf(a.info.event_type);
    const peer = peerOf(a.info, a.client.settings.boundAccount);
    const target = kind === 'suggestion' ? await store.messages.findAutoMessage(a.client.id, msgId) : undefined;
    const existing = target ? await store.conversations.byId(target.conversationId) : await store.conversations.byKey(a.client.id, channel, peer.peer);
    const history = existing
      ? (await store.messages.context(existing.id, target ? target.id : Number.MAX_SAFE_INTEGER, options.contextLines)).map(toContextLine)
      : [];
    const question = await questionLine(store, a, clock.now());
    const context = target ? history : [...history, question].slice(-options.contextLines);
    const fallbackText = a.client.settings.fallbackText ?? options.defaultFallbackText;
    const purpose = kind === 'website' ? 'website' : 'suggestion';
    let answer: EngineAnswer;
    try {
      answer = await askEngine(engine, { purpose, clientId: a.client.id, channel, isGroup: peer.groupId !== null, context, fallbackText }, options.engineTimeoutMs, clock);
    } catch (error) {
      // A website visitor is answered whatever the engine does: a time-out is a handoff to a human.
      // assist_dialog keeps its 504 engine_timeout (section 6): the caller maps the exception.
      if (kind !== 'website' || !(error instanceof EngineTimeout)) throw error;
      answer = { content: fallbackText, handoff: true, confidence: null, sources: [], cause: error.message, engine: error.engine };
    }
    return write(
      {
        kind: 'answered',
        request: ingestRequest(a),
        reply: {
          kind,
          msgId,
          targetMessageId: target?.id ?? null,
          existingConversationId: existing?.id ?? null,
          contextMessages: context.length,
          engine: answer.engine ?? engine.name,
          answer,
        },
      },
      a.info.event_type,
    );
  }

  return {
    handle(a: Accepted): Promise<Outcome> {
      switch (a.info.event_type) {
        case 'auto_dialog': {
          const request = ingestRequest(a);
          return write({ kind: 'auto_dialog', request }, a.info.event_type).then((outcome) => {
            if (outcome.kind === 'ok' && outcome.replyScheduled) options.onReplyScheduled?.(outcome.conversationId, a.client.id, request.now);
            return outcome;
          });
        }
        case 'cmd_dialog':
          return write({ kind: 'cmd_dialog', request: ingestRequest(a) }, a.info.event_type);
        case 'website_dialog':
          return answered(a, 'website');
        case 'assist_dialog':
          return answered(a, 'suggestion');
        default:
          return assertNever(a.info.event_type, 'event_type');
      }
    },
    /** The stored first response for an exact resend (same signature), if there is one. */
    storedResponse(clientId: string, eventType: string, msgId: string, contentHash: string): Outcome | null | Promise<Outcome | null> {
      const found = (prior: Awaited<ReturnType<MessageReads['idempotency']['get']>>): Outcome | null =>
        !prior || prior.contentHash !== contentHash ? null : { kind: 'ok', status: 200, body: prior.body, conversationId: prior.conversationId, msgId, replayed: true };
      // SQLite answers in this turn (no promise on the replay path); PostgreSQL later.
      const prior = store.idempotency.get(clientId, eventType, msgId);
      return prior instanceof Promise ? prior.then(found) : found(prior);
    },
  };
}

export type MessageService = ReturnType<typeof createMessageService>;
