import { createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import { openDatabase } from '../../src/main/store/db.ts';
import { createStore, type Store } from '../../src/main/store/index.ts';
import { newId } from '../../src/main/store/ids.ts';
import { loadServerConfig } from '../../src/main/config/server-config.ts';
import { canonicalJson } from '../../src/main/auth/canonical-json.ts';
import { signingString } from '../../src/main/auth/signature.ts';
import { messageInfoSchema } from '../../src/shared/protocol/message-schema.ts';
import { createKbEngine } from '../../src/main/engines/kb-engine.ts';
import { createIndexedKnowledge } from '../../src/main/engines/kb-index.ts';
import { createEngineRouter } from '../../src/main/engines/router.ts';
import { askEngine } from '../../src/main/engines/ask.ts';
import { createMessageService, type MessageWriter } from '../../src/main/conversations/message-service.ts';
import { executeWrite, type WriteCommand, type WriteResult } from '../../src/main/conversations/write-commands.ts';
import { deliveryInfo } from '../../src/main/autoreply/reply-scheduler.ts';
import { BUILTIN_ENGINE } from '../../src/shared/engine-config.ts';
import { emptyWriteStats } from '../../src/main/store/write-queue.ts';
import type { Clock } from '../../src/shared/clock.ts';
import type { Engine, EngineAnswer } from '../../src/main/engines/engine.ts';
import { exchanges, type ScaleShape } from './scenario.ts';

/**
 * The bulk loader of bench/scale. Sending a million messages over HTTP takes hours, so the loader
 * runs the service's own write path in process instead, with nothing hand-written in SQL:
 * - each customer message goes through the message service (`createMessageService`, the code
 *   behind POST /custom-im/chat-messages after authentication); answers come from the real
 *   built-in engine (router + KB engine over the real knowledge base), asked about the latest
 *   customer message and cached per text (see below);
 * - every write is the writer thread's own `executeWrite` command (auto_dialog, answered,
 *   request_log, auto_reply, delivery_attempt), so the rows, the search index (filled at the end by
 *   FTS5's bulk 'rebuild': the index its trigger builds), conversations' counters, last_message_at, unread, needs_human, idempotency and
 *   request log rows are exactly what a served store holds;
 * - auto replies follow the reply scheduler: after the client's quiet period the pending messages
 *   of a conversation are answered together (a newer message re-arms the timer), the answer and
 *   its delivery commit together, and the delivery is recorded as sent on its first attempt (a
 *   receiver answering 200), as the outbox records it.
 * What differs from a served store: the commands of many requests share one transaction (a
 * served store commits smaller batches: same rows), the clock is simulated (the history spans
 * `shape.spanMs` and ends when the build starts), and request latencies in the log are a constant.
 */
export interface LoadOptions {
  dataDir: string;
  clientId: string;
  /** The client's secret, so stored signatures are real HMACs of the stored message_info. */
  secret: string;
  shape: ScaleShape;
  kb: Array<{ question: string }>;
  /** When the history ends (epoch ms); default now. */
  end?: number;
  /** Ask the engine with the whole context, uncached, exactly as the service does (slow: tests). */
  exactAnswers?: boolean;
  /** Exchanges per transaction. */
  batch?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface LoadResult {
  ms: number;
  messages: number;
  replies: number;
  deliveries: number;
}

interface Due {
  conv: string;
  at: number;
}

export async function loadHistory(o: LoadOptions): Promise<LoadResult> {
  const started = performance.now();
  const config = loadServerConfig(o.dataDir);
  const store = createStore(openDatabase(join(o.dataDir, 'switchboard.db'), { busyTimeoutMs: config.busyTimeoutMs }));
  // A bigger page cache for the build only (the FTS and index pages of a growing store); the
  // served store keeps SQLite's default.
  store.connection.exec('PRAGMA cache_size = -262144');
  const client = store.clients.get(o.clientId);
  if (!client) throw new Error(`no client ${o.clientId} in ${o.dataDir}`);
  let now = 0;
  const clock: Clock = { now: () => now, after: () => () => {} };
  // The engine thread's in-memory index: the same rows, order and scores as FTS5 (kb-index.test.ts).
  const knowledge = createIndexedKnowledge(store.kb);
  const router = createEngineRouter({
    builtin: createKbEngine(knowledge, { threshold: config.kbThreshold, queryMessages: 3 }),
    knowledge,
    engineOf: () => BUILTIN_ENGINE,
    load: () => undefined,
  });
  // Even in memory, half a million engine calls with their context add minutes to the build. The loader asks the real engine about the latest customer message alone and keeps
  // the answer per text (the service also weighs the two messages before it).
  const answers = new Map<string, Promise<EngineAnswer>>();
  const engine: Engine = o.exactAnswers ? router : {
    name: router.name,
    answer(request, signal) {
      const last = request.context.findLast((l) => l.role === 'customer' && l.content.trim() !== '');
      const key = `${request.fallbackText}\u0000${last?.content ?? ''}`;
      let a = answers.get(key);
      if (!a) answers.set(key, (a = router.answer({ ...request, context: last ? [last] : [] }, signal)));
      return a;
    },
  };
  // The writer thread's work, run here inside the loader's open transaction.
  // One command after the other, as the writer thread runs them: a command's awaits never interleave with another's.
  let tail: Promise<unknown> = Promise.resolve();
  const write = (command: WriteCommand): Promise<WriteResult> => {
    const done = tail.then(() => executeWrite(store, command));
    tail = done.catch(() => {});
    return done;
  };
  const writer: MessageWriter = {
    submit: (command) => write(command),
    send: (command) => void write(command),
    drain: () => tail.then(() => {}),
    close: () => Promise.resolve(),
    stats: emptyWriteStats(),
  };
  const service = createMessageService(store, writer, engine, clock, {
    engineTimeoutMs: config.engineTimeoutMs,
    defaultFallbackText: config.fallbackText,
    contextLines: 50,
  });
  const settings = client.settings;
  const active = { id: client.id, enabled: true, settings, keys: [] };
  const quiet = settings.quietSeconds * 1000;
  const convIds = new Map<number, string>();
  // Reply timers in due order: the quiet period is the same for every conversation, so a queue suffices.
  const due: Due[] = [];
  let dueHead = 0;
  const lastCustomerAt = new Map<string, number>();
  const counts = { messages: 0, replies: 0, deliveries: 0 };

  const fireReply = async (conv: string, at: number): Promise<void> => {
    if ((lastCustomerAt.get(conv) ?? 0) + quiet > at) return; // a newer message re-armed the timer
    lastCustomerAt.delete(conv);
    now = at;
    const pending = store.messages.pendingReplies(conv);
    const row = store.conversations.byId(conv);
    if (pending.length === 0 || !row) return;
    const context = store.messages.context(conv, pending.at(-1)!.id, 50).map((e) => ({ role: e.role, speaker: e.speaker, content: e.content, at: e.at }));
    const answer = await askEngine(engine, { purpose: 'auto_reply', clientId: client.id, channel: 'im', isGroup: false, context, fallbackText: settings.fallbackText ?? '' }, config.engineTimeoutMs, clock);
    const replyMsgId = newId('reply');
    const content = answer.handoff ? (settings.fallbackText ?? null) : answer.content;
    const sendUrl = pending.at(-1)!.sendUrl ?? settings.sendUrl ?? null;
    const result = await write({
      kind: 'auto_reply',
      conversationId: conv,
      clientId: client.id,
      messageIds: pending.map((p) => p.id),
      replyTo: pending.map((p) => p.msgId),
      replyMsgId,
      engine: answer.engine ?? engine.name,
      answer,
      delivery: content && sendUrl ? { sendUrl, messageInfo: JSON.stringify(deliveryInfo(replyMsgId, conv, pending, row.groupId, row.customerId, settings, content, at)) } : null,
      now: at,
    });
    counts.replies++;
    if (result?.kind === 'auto_reply' && result.deliveryId !== null) {
      counts.deliveries++;
      // The receiver answered 200 in 25 ms: the outbox's record of a first attempt that succeeded.
      const sentAt = at + 25;
      await write({ kind: 'delivery_attempt', conversationId: conv, deliveryId: result.deliveryId, attempt: 1, startedAt: at, durationMs: 25, status: 200, error: null, outcome: 'sent', state: 'sent', nextAttemptAt: sentAt, now: sentAt });
    }
  };

  const ingest = async (e: { conv: number; eventType: 'auto_dialog' | 'website_dialog'; msgId: string; content: string; at: number }): Promise<void> => {
    now = e.at;
    const raw = { event_type: e.eventType, msg_id: e.msgId, from_user_id: `cust-${e.conv}`, from_user_type: 2, content: e.content, create_timestamp: Math.floor(e.at / 1000) };
    const info = messageInfoSchema.parse(raw);
    const canonicalInfo = canonicalJson(raw);
    const timestamp = Math.floor(e.at / 1000);
    const signature = createHmac('sha256', o.secret).update(signingString(timestamp, client.id, canonicalInfo)).digest('hex');
    const requestId = newId('request');
    const outcome = await service.handle({ requestId, client: active, info, canonicalInfo, contentHash: createHash('sha256').update(canonicalInfo).digest('hex'), signature });
    if (outcome.kind !== 'ok') throw new Error(`loader: ${e.msgId} was refused (${outcome.kind})`);
    convIds.set(e.conv, outcome.conversationId);
    counts.messages++;
    if (e.eventType === 'website_dialog') counts.replies++;
    // The request log row the HTTP server writes for an accepted request.
    await write({
      kind: 'request_log',
      entry: { at: e.at, requestId, method: 'POST', path: '/custom-im/chat-messages', clientId: client.id, eventType: e.eventType, msgId: e.msgId, conversationId: outcome.conversationId, status: 200, code: null, latencyMs: 4, replayed: false, problem: null, remote: '127.0.0.1', verified: true },
    });
    if (outcome.replyScheduled) {
      lastCustomerAt.set(outcome.conversationId, e.at);
      due.push({ conv: outcome.conversationId, at: e.at + quiet });
    }
  };

  const batch = o.batch ?? 5000;
  const all = exchanges(o.shape, o.kb, o.end ?? Date.now());
  const total = Math.floor(o.shape.entries / 2);
  let done = 0;
  let inTx = false;
  // The search index is filled at the end by FTS5's own bulk path ('rebuild'), 10-20 times faster
  // than indexing batch by batch, and the same index. Meanwhile the insert trigger still queues each
  // message (migration 14): a load killed midway leaves its committed messages queued, and the
  // writer indexes them when the store is next served. (Dropping the trigger instead was committed
  // with the first batch: a kill left the store without it, every later message unsearchable.)
  try {
    for (const e of all) {
      if (!inTx) {
        store.connection.exec('BEGIN IMMEDIATE');
        inTx = true;
      }
      while (dueHead < due.length && due[dueHead]!.at <= e.at) {
        const d = due[dueHead++]!;
        await fireReply(d.conv, d.at);
      }
      await ingest(e);
      if (++done % batch === 0) {
        await writer.drain();
        store.connection.exec('COMMIT');
        inTx = false;
        if (dueHead > 100_000) {
          due.splice(0, dueHead);
          dueHead = 0;
        }
        o.onProgress?.(done, total);
      }
    }
    if (!inTx) {
      store.connection.exec('BEGIN IMMEDIATE');
      inTx = true;
    }
    while (dueHead < due.length) {
      const d = due[dueHead++]!;
      await fireReply(d.conv, d.at);
    }
    await writer.drain();
    store.connection.exec("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild'); DELETE FROM messages_fts_queue; COMMIT");
    inTx = false;
    // As a served store after its next open: statistics current, the WAL folded in.
    store.connection.exec('PRAGMA optimize = 0x10002');
    store.connection.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    if (inTx) store.connection.exec('ROLLBACK');
    store.close();
  }
  return { ms: performance.now() - started, ...counts };
}

export type { Store };
