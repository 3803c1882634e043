import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { databasePath } from '../src/main/store/data-dir.ts';
import { openDatabase, type Db } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { seedList, FILTERS } from '../src/main/store/console-list.fixture.ts';
import { bulkMessages } from '../src/main/store/bulk-messages.fixture.ts';
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
    await h.service.console.handlers.setOperator(ANN);
  });
  after(async () => {
    await h.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a list or transcript read right after an action shows it (read-your-writes through the writer thread)', async () => {
    const c = h.service.console.handlers;
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
    const [conv] = rows(await h.service.console.handlers.listConversations({ clientId: 'acme', view: 'all', limit: 1 }));
    await h.service.console.handlers.markRead({ conversationId: conv!.id, upToId: 1 });
    await h.service.console.handlers.resolveConversation({ conversationId: conv!.id });

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
      assert.ok((await same('audit', local.audit(undefined, 100), remote.audit(undefined, 100))).length > 0);
    } finally {
      await worker.close();
      store.close();
    }
    assert.deepEqual(logs, [], 'nothing logged');
  });
});

/**
 * A store where searching "order" matches every message of only 5 conversations, grown until a
 * search takes at least `ms` in-process here: a page of 50 is never filled, so the search reads
 * every match (the costliest search there is).
 */
function buildSlowSearch(db: Db, ms: number): number {
  const store = createStore(db);
  let rows = 0;
  let searchMs = 0;
  // A fast machine needs more rows for the same stall.
  while (searchMs < ms && rows < 640_000) {
    const add = Math.max(20_000, rows);
    bulkMessages(db, rows, add, 5, (i) => `order ${i} of customer ${i % 5}`);
    rows += add;
    const times = [0, 1, 2].map(() => {
      const t = performance.now();
      store.console.conversations({ search: 'order', limit: 50, now: 0 });
      return performance.now() - t;
    });
    searchMs = times.sort((a, b) => a - b)[1]!;
  }
  return searchMs;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('a slow console search does not stall ingest', () => {
  it('with the read thread, requests are answered while searches run back to back; in-process, they wait for them', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-stall-'));
    try {
      const db = openDatabase(databasePath(dir));
      const searchMs = buildSlowSearch(db, 150);
      db.close();
      assert.ok(searchMs >= 100, `a search takes ${searchMs.toFixed(0)} ms in-process`);

      const measure = async (readWorker: boolean) => {
        const h = await startHarness({ dataDir: dir, config: { readWorker } });
        const client = readWorker ? 'on' : 'off';
        h.addClient(client, { sendUrl: 'http://127.0.0.1:9/hook' });
        let searching = true;
        let searches = 0;
        const latencies: number[] = [];
        try {
          await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'warm', from_user_type: 2, content: 'warm up' }, { client });
          // The console searching without pause, as several open consoles polling would.
          const searcher = (async () => {
            while (searching) {
              // Counted as they start: on two busy cores one search on the low-priority read thread
              // may outlast the 150 requests, and the one in flight still overlapped them.
              searches++;
              await h.service.console.handlers.listConversations({ search: 'order', view: 'all', limit: 50 });
              await new Promise((r) => setImmediate(r));
            }
          })();
          // At most 150 requests: under the client rate limit's burst of 200. At least 2 s, and on
          // the read thread until a second search has begun (on two busy cores one search on that
          // low-priority thread can outlast 2 s), within 8 s.
          const started = performance.now();
          const more = (): boolean => {
            const ran = performance.now() - started;
            return ran < 2000 || (readWorker && searches < 2 && ran < 8000);
          };
          while (latencies.length < 5 || (more() && latencies.length < 150)) {
            const sent = performance.now();
            const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `c${latencies.length}`, from_user_type: 2, content: 'where is my parcel?' }, { client });
            assert.equal(r.status, 200, JSON.stringify(r.body));
            latencies.push(performance.now() - sent);
            // Spaced, so the 150 requests span well over a search even when each is answered in a
            // few ms (ingest got faster; a faster loop ended before the second search began).
            await new Promise((r) => setTimeout(r, performance.now() - started < 2000 ? 10 : 60));
          }
          searching = false;
          await searcher;
        } finally {
          searching = false;
          await h.stop();
        }
        return { latencies, searches, median: median(latencies) };
      };

      const off = await measure(false);
      const on = await measure(true);
      const what = `search ${searchMs.toFixed(0)} ms; in-process: median ${off.median.toFixed(0)} ms over ${off.latencies.length} requests, ${off.searches} searches; read thread: median ${on.median.toFixed(0)} ms over ${on.latencies.length} requests, ${on.searches} searches`;
      t.diagnostic(what);
      assert.ok(off.median >= searchMs / 2, `in-process, ingest waits for the search: ${what}`);
      assert.ok(on.searches >= 2, `the searches ran during the requests (one done, the next started): ${what}`);
      assert.ok(on.median * 4 < off.median, `the read thread leaves ingest alone: ${what}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
