import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { spawnServe } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { startReceiver, eventually } from './helpers/receiver.ts';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { cliOk } from '../bench/lib.ts';
import { prepareDataDir, SCALE_CLIENT } from '../bench/scale/build.ts';
import { loadHistory } from '../bench/scale/loader.ts';
import { MAX_AUTO_REPLIES_PER_MINUTE } from '../src/main/autoreply/decide.ts';
import { exchanges, type Exchange, type ScaleShape } from '../bench/scale/scenario.ts';
import { decodeCursor, type ListCursor } from '../src/shared/list-cursor.ts';
import type { ConversationSummary } from '../src/shared/console-api.ts';

// bench/scale's bulk loader must leave the store a served one would: the same history sent through
// the real HTTP path (signed requests, real replies delivered to a receiver) and loaded in process
// give the same console list, transcripts, search results, stats totals and row counts.
// Small enough for npm test (a conversation's rounds stay under the per-minute reply cap, so no round waits a minute).
const SHAPE: ScaleShape = { entries: 800, conversations: 300, longConversation: 0, spanMs: 20 * 3_600_000 };

/** Every page of a list, following the keyset cursor. */
function everyPage(store: ReturnType<typeof createStore>, filter: { search?: string; now: number }): ConversationSummary[] {
  const out: ConversationSummary[] = [];
  let cursor: ListCursor | undefined;
  for (;;) {
    const page = store.console.conversations({ ...filter, limit: 200, cursor });
    out.push(...page.items);
    if (!page.nextCursor) return out;
    cursor = decodeCursor(page.nextCursor);
  }
}

/** What the console shows, without ids and times (those differ by construction). */
function snapshot(dataDir: string): unknown {
  const store = createStore(openDatabase(join(dataDir, 'switchboard.db')));
  try {
    const now = Date.now();
    const list = everyPage(store, { now });
    const byCustomer = new Map(list.map((c) => [c.id, c.customerId]));
    const conversations = list
      .map((c) => ({
        customer: c.customerId,
        channel: c.channel,
        messages: c.messageCount,
        unread: c.unread,
        needsHuman: c.needsHuman,
        autoReply: c.autoReply,
        lastText: c.lastText,
        transcript: store.console.transcript(c.id, 10_000).map((e) => [e.role, e.content, e.handoff ?? null, e.decision?.reason ?? null, e.decision?.outcome ?? null, (e.sources ?? []).map((s) => s.id)]),
      }))
      .sort((a, b) => (a.customer! < b.customer! ? -1 : 1));
    const search = Object.fromEntries(
      ['shipping', '申请退款', '退款', 'Thanks', 'qzxqzx'].map((term) => [term, everyPage(store, { search: term, now }).map((c) => byCustomer.get(c.id)).sort()]),
    );
    const series = store.stats.series(0);
    const stats = Object.fromEntries(Object.entries(series).map(([name, m]) => [name, [...m.values()].reduce((a, b) => a + b, 0)]));
    const db = store.connection;
    const rows = (sql: string): unknown => db.prepare(sql).all().map((r) => ({ ...r }));
    return {
      conversations,
      search,
      stats: { ...stats, needsHuman: store.stats.needsHuman() },
      deliveries: rows('SELECT state, kind, attempts, last_status, count(*) AS n FROM deliveries GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4'),
      attempts: rows('SELECT outcome, status, attempt, count(*) AS n FROM delivery_attempts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3'),
      idempotency: rows('SELECT event_type, status, count(*) AS n, count(message_id) AS with_message FROM idempotency GROUP BY 1, 2 ORDER BY 1, 2'),
      requestLog: rows('SELECT event_type, status, replayed, count(*) AS n, count(conversation_id) AS with_conversation FROM request_log GROUP BY 1, 2, 3 ORDER BY 1, 2, 3'),
      replies: rows('SELECT kind, handoff, engine, count(*) AS n FROM replies GROUP BY 1, 2, 3 ORDER BY 1, 2, 3'),
      fts: rows('SELECT count(*) AS n FROM messages_fts'),
      pending: rows("SELECT count(*) AS n FROM messages WHERE reply_outcome = 'pending'"),
    };
  } finally {
    store.close();
  }
}

/** Through the real server: a conversation's next message only after its reply was delivered, as the loader's timeline has it. */
async function sendOverHttp(dataDir: string, secret: string, history: Exchange[]): Promise<void> {
  const server = await spawnServe(dataDir);
  try {
    const rounds: Exchange[][] = [];
    const seen = new Map<number, number>();
    for (const e of history) {
      const round = seen.get(e.conv) ?? 0;
      seen.set(e.conv, round + 1);
      (rounds[round] ??= []).push(e);
    }
    const db = new DatabaseSync(join(dataDir, 'switchboard.db'), { readOnly: true });
    const settled = db.prepare("SELECT (SELECT count(*) FROM messages WHERE reply_outcome = 'pending') + (SELECT count(*) FROM deliveries WHERE state = 'pending') AS n");
    const started: number[] = [];
    for (const [r, round] of rounds.entries()) {
      // The loader's customers write hours apart; here rounds follow each other within seconds, so a
      // conversation's 7th message waits a minute after its 1st: no reply is refused by the per-minute cap.
      const capFree = r >= MAX_AUTO_REPLIES_PER_MINUTE ? started[r - MAX_AUTO_REPLIES_PER_MINUTE]! + 61_000 - Date.now() : 0;
      if (capFree > 0) await new Promise((resolve) => setTimeout(resolve, capFree));
      started.push(Date.now());
      for (let i = 0; i < round.length; i += 10) {
        await Promise.all(
          round.slice(i, i + 10).map(async (e) => {
            const now = Math.floor(Date.now() / 1000);
            const info = { event_type: e.eventType, msg_id: e.msgId, from_user_id: `cust-${e.conv}`, from_user_type: 2, content: e.content, create_timestamp: now };
            const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody(SCALE_CLIENT, secret, info, now)) });
            assert.equal(res.status, 200, await res.text());
          }),
        );
      }
      await eventually(() => (settled.get() as { n: number }).n === 0, 'replies of the round delivered', 60_000);
    }
    db.close();
  } finally {
    server.child.kill('SIGTERM');
    await server.exit();
  }
}

test('the bulk loader leaves the store the HTTP path leaves: same list, transcripts, search, stats and rows', { timeout: 600_000 }, async () => {
  const receiver = await startReceiver();
  const httpDir = mkdtempSync(join(tmpdir(), 'sb-scale-http-'));
  const loadDir = mkdtempSync(join(tmpdir(), 'sb-scale-load-'));
  try {
    const a = prepareDataDir(httpDir, receiver.url);
    const b = prepareDataDir(loadDir, receiver.url);
    for (const dir of [httpDir, loadDir]) cliOk(dir, 'clients', 'set', SCALE_CLIENT, '--quiet-seconds', '1');
    const history = [...exchanges(SHAPE, a.kb, Date.now())];
    assert.ok(history.some((e) => e.eventType === 'auto_dialog') && history.some((e) => e.eventType === 'website_dialog'));

    await sendOverHttp(httpDir, a.secret, history);
    const loaded = await loadHistory({ dataDir: loadDir, clientId: SCALE_CLIENT, secret: b.secret, shape: SHAPE, kb: b.kb, exactAnswers: true });
    assert.equal(loaded.messages, history.length);

    const served = snapshot(httpDir) as { conversations: unknown[]; deliveries: unknown[] };
    assert.equal(served.conversations.length, SHAPE.conversations);
    assert.ok(served.deliveries.length > 0, 'auto replies were delivered');
    const mine = snapshot(loadDir);
    if (process.env['SCALE_LOADER_DUMP']) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(`${process.env['SCALE_LOADER_DUMP']}-served.json`, JSON.stringify(served, null, 1));
      writeFileSync(`${process.env['SCALE_LOADER_DUMP']}-loaded.json`, JSON.stringify(mine, null, 1));
    }
    assert.deepEqual(mine, served);
  } finally {
    await receiver.close();
    rmSync(httpDir, { recursive: true, force: true });
    rmSync(loadDir, { recursive: true, force: true });
  }
});
