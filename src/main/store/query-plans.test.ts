import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from './db.ts';
import { createStore, type Store } from './index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { consoleInputs, type ConsoleInput } from '../../shared/console-api.ts';

/** Every statement the store prepares, captured as it is prepared, so the test cannot drift from the code. */
function capturingStore(db: Db): { store: Store; statements: string[] } {
  const statements: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    statements.push(sql);
    return prepare(sql);
  }) as Db['prepare'];
  return { store: createStore(db), statements };
}

/** A store shaped like a busy one: many conversations, long histories, mostly settled replies and deliveries. */
export function fill(store: Store, conversations: number, perConversation: number): void {
  store.transaction(() => {
    store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
    let n = 0;
    for (let c = 0; c < conversations; c++) {
      const id = `c${c}`;
      store.conversations.create({ id, clientId: 'a', channel: 'im', peer: `u:${c}`, groupId: null, customerId: id, autoReply: 'active', now: 0 });
      for (let i = 0; i < perConversation; i++) {
        n++;
        const msgId = `m${n}`;
        const messageId = store.messages.insert({
          conversationId: id, clientId: 'a', eventType: 'auto_dialog', msgId, role: 'customer', fromUserId: 'u', fromUserType: 1,
          content: `hello ${n}`, messageInfo: '{}', createTimestamp: n, receivedAt: n, replyScheduled: true, replyReason: null,
        });
        store.idempotency.put({ clientId: 'a', eventType: 'auto_dialog', msgId, contentHash: 'h', status: 200, body: '{}', conversationId: id, messageId, signature: `s${n}`, at: n });
        const last = c % 100 === 0 && i === perConversation - 1;
        if (!last) store.messages.settleReply(messageId, 'answered', `r${n}`, null);
        const replyId = store.messages.insertReply({ conversationId: id, kind: 'auto', msgId: `r${n}`, replyTo: [msgId], afterMessageId: messageId, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: n });
        store.deliveries.insert({ replyId, replyMsgId: `r${n}`, conversationId: id, clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: last ? 'pending' : 'sent', nextAttemptAt: n, createdAt: n });
      }
    }
  });
}

/** A full read of a table (a partial or covering index is not one), also as a join's inner loop, or an index built per query. */
const BIG = /^SCAN (?!CONSTANT ROW)\w+( AS \w+)?( LEFT-JOIN)?$|AUTOMATIC/;

/**
 * Statements allowed to read a whole big table, and why. Everything else the store prepares is
 * on or near the hot path (ingest, reply, outbox, start-up) and must be planned on an index.
 */
const ALLOWED: Array<[RegExp, string]> = [
  [/ORDER BY \+c\.\w+( DESC)?, c\.id LIMIT \?\) c /, "console search on conversation fields: LIKE '%text%' reads every conversation, one pass, not per request"],
  [/GROUP BY state/, 'delivery counts for the console status, not per request'],
  [/^SELECT \* FROM \w+ ORDER BY id DESC LIMIT \?$/, 'newest first by rowid: the walk stops at the limit'],
  [/FROM (kb_entries|canned_replies)\b/, 'operator-kept tables of hundreds to thousands of rows; KB matching at scale is measured separately'],
  [/FROM request_log WHERE status >= 400 ORDER BY id DESC LIMIT/, 'console request log filter, not per request'],
  [/^UPDATE replay_runs SET status = 'failed'/, 'at start-up, and on several nodes in a replay claim or a read of a stale run: a table of runs an admin started, tens to hundreds'],
  [/^SELECT id FROM replay_runs WHERE status = 'running'/, 'a replay claim (an admin starting a run): the same small table of runs'],
  [/FROM messages_fts_queue$/, 'the search index queue: empty after every writer commit, counted by tests'],
  [/^SELECT id, client_id, sealed, hint, retired_at FROM client_secrets ORDER BY id$/, 'every sealed client secret, for secrets check and rotate-key and the start-up key check: once per command or start, a row per secret'],
  [/^SELECT total\(length\(m\.content\)\) AS chars FROM messages_fts_queue q CROSS JOIN messages m/, "the search index queue's text, for the merge step's budget: the queue in full, each message by id (checked below)"],
];

/** The console list's statements (prepared per filter): first and next pages, filters, views, searches. */
function consoleListPages(store: Store): void {
  const filters: Array<Omit<ConsoleInput<'listConversations'>, 'limit' | 'cursor'>> = [
    {}, { clientId: 'a' }, { channel: 'im', state: 'active' }, { state: 'paused' }, { state: 'stopped' }, { state: 'needs_human' }, { view: 'needs_you' },
    { search: 'hello 1' }, { search: 'c1' }, { search: 'c1', clientId: 'a', state: 'active' }, { search: 'he' }, { view: 'needs_you', search: 'hello' },
  ];
  for (let i = 3; i < 10; i++) store.conversations.flagNeedsHuman(`c${i}`, i % 3, 'handoff');
  // Team mode: an account's own unread counts, Needs you and tabs (the reader's), on the same filters.
  const team: typeof filters = [{ assignment: 'mine' }, { assignment: 'unassigned' }, { assignment: 'mine', view: 'needs_you' }, { assignment: 'unassigned', search: 'hello' }];
  const reader = { id: 'agent', floor: 0 };
  const runs = [...filters.map((f) => ({ f, reader: null })), ...[...filters, ...team].map((f) => ({ f, reader }))];
  for (const { f, reader: r0 } of runs) {
    let cursor: string | undefined;
    for (let page = 0; page < 2; page++) {
      const r = store.console.conversations({ ...consoleInputs.listConversations.parse({ ...f, limit: 3, cursor }), now: 0, reader: r0 });
      if (!r.nextCursor) break;
      cursor = r.nextCursor;
    }
  }
}

function plans(db: Db, statements: string[]) {
  const out: Array<{ sql: string; plan: string[] }> = [];
  for (const sql of new Set(statements)) {
    if (!/^\s*(SELECT|UPDATE|DELETE|WITH)/i.test(sql)) continue;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail);
    out.push({ sql: sql.replace(/\s+/g, ' ').trim(), plan });
  }
  return out;
}

function offenders(db: Db, statements: string[]): string[] {
  return plans(db, statements)
    .filter(({ sql }) => !ALLOWED.some(([re]) => re.test(sql)))
    // A scan of a subquery's rows (its CO-ROUTINE or MATERIALIZE step) is not a read of a table.
    .filter(({ plan }) => plan.some((p) => BIG.test(p) && !plan.includes(`CO-ROUTINE ${p.split(' ')[1]}`) && !plan.includes(`MATERIALIZE ${p.split(' ')[1]}`)))
    .map(({ sql, plan }) => `${sql}\n    ${plan.join('\n    ')}`);
}

for (const analyzed of [false, true]) {
  test(`every hot-path statement is planned on an index (${analyzed ? 'after ANALYZE' : 'without statistics'})`, () => {
    const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-plan-')), 'p.db'));
    const { store, statements } = capturingStore(db);
    fill(store, 200, 20);
    if (analyzed) db.exec('ANALYZE');
    consoleListPages(store);
    const bad = offenders(db, statements);
    assert.deepEqual(bad, [], `\n${bad.join('\n')}`);
    store.close();
  });
}

test('the hot statements named in issue 10 and 12 use the index meant for them', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-plan-')), 'p.db'));
  const { store, statements } = capturingStore(db);
  fill(store, 50, 10);
  db.exec('ANALYZE');
  const all = plans(db, statements);
  const planOf = (fragment: string): string => {
    const hit = all.filter((p) => p.sql.includes(fragment));
    assert.equal(hit.length, 1, `one statement contains ${fragment}`);
    return hit[0]!.plan.join(' | ');
  };
  assert.match(planOf('min(next_attempt_at)'), /COVERING INDEX deliveries_due/);
  // The outbox's scan (issue 27): clients, then each one's lanes, one seek each; then a lane's due deliveries.
  assert.match(planOf('d.client_id > c.client_id'), /SEARCH d USING COVERING INDEX deliveries_lane \(client_id>\?\)/);
  const lanes = planOf('e.origin > d.origin');
  assert.match(lanes, /SEARCH e USING COVERING INDEX deliveries_lane \(client_id=\? AND origin>\?\)/);
  assert.match(lanes, /SEARCH d USING INTEGER PRIMARY KEY/);
  const laneDue = planOf('d.origin = ?2');
  assert.match(laneDue, /SEARCH d USING INDEX deliveries_lane \(client_id=\? AND origin=\? AND next_attempt_at<\?\)/);
  assert.match(laneDue, /SEARCH e USING COVERING INDEX deliveries_pending/);
  for (const plan of [lanes, laneDue]) assert.doesNotMatch(plan, /TEMP B-TREE|AUTOMATIC/);
  assert.match(planOf("messages INDEXED BY messages_pending_order"), /messages_pending_order/);
  assert.doesNotMatch(planOf("messages INDEXED BY messages_pending_order"), /TEMP B-TREE/);
  assert.match(planOf('LEFT JOIN deliveries d ON d.reply_id = r.id'), /deliveries_reply/);
  assert.match(planOf('FROM idempotency WHERE client_id = ? AND event_type = ? AND msg_id = ?'), /INDEX/);
  assert.match(planOf('FROM conversations WHERE client_id = ? AND channel = ? AND peer = ?'), /INDEX/);
  // Dashboard stats read the per-minute rollup, not the raw rows in the window (issue 12).
  assert.match(planOf('FROM stats_minutes WHERE minute >= ?'), /SEARCH stats_minutes USING PRIMARY KEY/);
  // The staff wait: the held conversations by their last message; the first unanswered line walked
  // from the newest answer (a staff or AI line, a Resume, a reply), each found from the end on an index.
  assert.match(planOf('FROM conversations INDEXED BY conversations_held'), /SEARCH conversations USING INDEX conversations_held \(last_message_at>\?\)/);
  const firstUnanswered = planOf("m.reply_reason IN ('auto_reply_stopped', 'auto_reply_paused')");
  assert.match(firstUnanswered, /SEARCH m USING INDEX messages_conversation \(conversation_id=\? AND id>\?\)/);
  assert.match(firstUnanswered, /SEARCH s USING (COVERING )?INDEX messages_answer_lines \(conversation_id=\?\)/);
  assert.match(firstUnanswered, /SEARCH r USING INDEX replies_conversation \(conversation_id=\?\)/);
  assert.match(firstUnanswered, /SEARCH d USING INDEX deliveries_reply \(reply_id=\?\)/);
  assert.doesNotMatch(firstUnanswered, /TEMP B-TREE/);
  // The search index's queue is read in full (a few rows) and each message fetched by its id, never the other way round.
  const flushes = statements.filter((s) => s.includes('FROM messages_fts_queue q CROSS JOIN messages m') && !s.startsWith('EXPLAIN'));
  assert.equal(flushes.length, 2, 'the merge budget and the indexing');
  for (const flush of flushes) {
    const flushPlan = (db.prepare(`EXPLAIN QUERY PLAN ${flush}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
    assert.match(flushPlan, /^SCAN q \| SEARCH m USING INTEGER PRIMARY KEY/);
  }
  store.close();
});
