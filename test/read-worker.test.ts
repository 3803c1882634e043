import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { databasePath } from '../src/main/store/data-dir.ts';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { seedList, FILTERS } from '../src/main/store/console-list.fixture.ts';
import { consoleReads } from '../src/main/store/console-reads.ts';
import { inProcessReads, startReadWorker } from '../src/main/store/worker-reader.ts';
import type { ConversationSummary } from '../src/shared/console-api.ts';

const ANN = { id: 'ann', name: 'Ann Operator' };

/** The rows of a list, whether it is a plain array or a page of them (keyset paging, issue 12). */
const rows = (list: ConversationSummary[] | { items: ConversationSummary[] }): ConversationSummary[] => (Array.isArray(list) ? list : list.items);
const READER = new URL('../src/main/reader-worker.ts', import.meta.url);

describe('console reads on the read thread', () => {
  let h: Harness;
  let rx: Receiver;
  let dir: string;
  const logs: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-reads-'));
    const db = openDatabase(databasePath(dir));
    seedList(db, 300, 3);
    db.close();
    rx = await startReceiver();
    rx.respond = () => ({ status: 503 });
    h = await startHarness({ dataDir: dir, log: (line) => logs.push(line) });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'bot-acme' });
    await h.service.console.asOwner.setOperator(ANN);
  });
  after(async () => {
    await h.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a list or transcript read right after an action shows it (read-your-writes through the writer thread)', async () => {
    const c = h.service.console.asOwner;
    for (let i = 0; i < 15; i++) {
      const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `ryw-${i}`, from_user_type: 2, content: `ryw question ${i}` });
      const id = String(r.body['conversation_id']);
      // The message itself: acknowledged means committed, so the next list has it.
      assert.ok(rows(await c.listConversations({ search: `ryw question ${i}`, view: 'all', limit: 10 })).some((s) => s.id === id), `message ${i} listed`);
      await c.stopAutoReply({ conversationId: id });
      const stopped = rows(await c.listConversations({ state: 'stopped', view: 'all', limit: 200 }));
      assert.equal(stopped.find((s) => s.id === id)?.autoReply, 'stopped', `stop ${i} listed`);
      const sent = await c.sendReply({ conversationId: id, content: `on it ${i}` });
      const t = await c.getTranscript({ conversationId: id, limit: 50 });
      assert.equal(t.entries.find((e) => e.msgId === sent.msgId)?.content, `on it ${i}`, `reply ${i} in the transcript`);
      await c.resumeAutoReply({ conversationId: id, undoStop: false });
      assert.equal((await c.getConversations({ ids: [id] }))[0]?.autoReply, 'active', `resume ${i} read back`);
    }
  });

  it('every console read gives what it gives in-process', async () => {
    // Something in each read: refused requests, failing deliveries, audit entries, replies.
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'x', from_user_type: 2, content: 'hi' }, { secret: 'wrong-secret-0123456789abcdefghijklmnopqrstuvwxyz' });
    await eventually(() => rx.received.length >= 3, 'failing deliveries');
    const [conv] = rows(await h.service.console.asOwner.listConversations({ clientId: 'acme', view: 'all', limit: 1 }));
    await h.service.console.asOwner.markRead({ conversationId: conv!.id, upToId: 1 });
    await h.service.console.asOwner.resolveConversation({ conversationId: conv!.id });

    const store = createStore(openDatabase(databasePath(dir)));
    const local = inProcessReads(consoleReads(store));
    const worker = await startReadWorker(READER, { databasePath: databasePath(dir), busyTimeoutMs: 5000 }, consoleReads(store), (line) => logs.push(line));
    const remote = worker.reads;
    try {
      const now = h.clock.now();
      const same = async <T>(what: string, a: Promise<T>, b: Promise<T>): Promise<T> => {
        const [x, y] = await Promise.all([a, b]);
        assert.deepStrictEqual(y, x, what);
        return x;
      };
      for (const f of FILTERS) await same(`list ${JSON.stringify(f)}`, local.conversations({ ...f, now }), remote.conversations({ ...f, now }));
      const ids = rows(await local.conversations({ limit: 40, now })).map((c) => c.id);
      assert.ok(ids.includes(conv!.id));
      await same('by ids', local.conversationsByIds([...ids, 'nope']), remote.conversationsByIds([...ids, 'nope']));
      for (const id of ids) await same(`transcript ${id}`, local.transcriptPage(id, 2), remote.transcriptPage(id, 2));
      const page = await same('transcript with replies', local.transcriptPage(conv!.id, 50), remote.transcriptPage(conv!.id, 50));
      assert.ok(page?.entries.some((e) => e.kind === 'reply' && e.delivery !== null), 'replies with deliveries compared');
      await same('earlier page', local.transcriptPage('c1', 1, 3), remote.transcriptPage('c1', 1, 3));
      await same('unknown transcript', local.transcriptPage('nope', 5), remote.transcriptPage('nope', 5));
      const stats = await same('dashboard', local.dashboard(0), remote.dashboard(0));
      assert.ok(stats.deliveries.pending > 0 && stats.needsHuman > 0);
      const requests = await same('request log', local.requestLog({ onlyFailed: false, limit: 500 }), remote.requestLog({ onlyFailed: false, limit: 500 }));
      assert.ok(requests.rows.some((r) => r.status === 401));
      const problems = await same('deliveries', local.deliveryProblems(['retrying', 'dead'], null, 100), remote.deliveryProblems(['retrying', 'dead'], null, 100));
      assert.ok(problems.rows.length > 0 && Object.keys(problems.labels).length > 0);
      assert.ok((await same('audit', local.audit({ limit: 100 }), remote.audit({ limit: 100 }))).length > 0);
    } finally {
      await worker.close();
      store.close();
    }
    assert.deepEqual(logs, [], 'nothing logged');
  });
});

const HELD_READER = new URL('./helpers/held-reader-worker.ts', import.meta.url);

// How much ingest gains from the read thread under a real long search (latency with it off, on,
// and without searches) is a figure, not a property: bench/search-stall measures it.
describe('a console search on the read thread does not stall ingest', () => {
  it('requests are answered and committed while a search is held on the read thread; the search then answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-stall-'));
    // The side file the held read thread waits on (test/helpers/held-reader-worker.ts): locked here.
    const hold = new DatabaseSync(`${databasePath(dir)}.hold`);
    hold.exec('BEGIN IMMEDIATE');
    let h: Harness | undefined;
    try {
      h = await startHarness({ dataDir: dir, readerEntry: HELD_READER, config: { readWorker: true } });
      h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
      const say = (n: number) => h!.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `c${n}`, from_user_type: 2, content: `where is my order ${n}?` });
      assert.equal((await say(0)).status, 200);
      let searched = false;
      const search = h.service.console.asOwner.listConversations({ search: 'order', view: 'all', limit: 50 }).finally(() => (searched = true));
      await eventually(() => existsSync(`${databasePath(dir)}.held`), 'the search held on the read thread');
      for (let n = 1; n <= 20; n++) {
        const r = await say(n);
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      await h.quiesce();
      assert.equal(searched, false, 'every request was answered and committed while the search was still held');
      assert.equal(Number((h.admin.connection.prepare("SELECT count(*) AS n FROM messages WHERE content LIKE 'where is my order%'").get() as { n: number }).n), 21);
      hold.exec('ROLLBACK');
      assert.equal(rows(await search).length, 21, 'the search, let go, answers with what was committed meanwhile');
    } finally {
      if (hold.isTransaction) hold.exec('ROLLBACK');
      hold.close();
      await h?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
