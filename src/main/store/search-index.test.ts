import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import { createWriteQueue } from './write-queue.ts';

function setup(path = join(mkdtempSync(join(tmpdir(), 'sb-fts-')), 's.db')) {
  const store = createStore(openDatabase(path));
  store.connection.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  store.connection.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('c', 'a', 'im', 'u:x', 0, 0)").run();
  return store;
}

const add = (store: Store, n: number, content: string) => (): number =>
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: `m${n}`, role: 'customer', fromUserId: 'x', fromUserType: 2, content,
    messageInfo: '{}', createTimestamp: null, receivedAt: n, replyScheduled: null, replyReason: null,
  });

const found = (store: Store, q: string): number =>
  (store.connection.prepare('SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?').get(`"${q}"`) as { n: number }).n;
/** Index segments: FTS5 writes one each time it flushes its buffer, and merges them later. */
const segments = (store: Store): number => (store.connection.prepare('SELECT count(DISTINCT segid) AS n FROM messages_fts_idx').get() as { n: number }).n;

test('the writer indexes a whole transaction of messages at once: one index segment per commit, not one per message, and every message searchable when it commits', async () => {
  const store = setup();
  const queue = createWriteQueue(store.connection, (e) => assert.fail(String(e)), { now: () => 0, beforeCommit: () => void store.searchIndex.flushQueue() });
  await Promise.all(Array.from({ length: 8 }, (_, i) => queue.run(add(store, i, `where is parcel ${i}`))));
  assert.equal(queue.stats.batches, 1);
  assert.equal(found(store, 'parcel'), 8);
  assert.equal(store.searchIndex.queued(), 0);
  // Each job runs in its own savepoint; FTS5 flushes at every savepoint of a transaction it is part of.
  assert.equal(segments(store), 1);
  await Promise.all(Array.from({ length: 8 }, (_, i) => queue.run(add(store, 8 + i, `refund ${i}`))));
  assert.equal(found(store, 'refund'), 8);
  assert.equal(segments(store), 2);
  store.connection.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
});

test('if indexing fails, the messages still commit, the error is reported, and the next commit indexes them', async () => {
  const store = setup();
  const errors: string[] = [];
  let fail = true;
  const queue = createWriteQueue(store.connection, (e) => errors.push((e as Error).message), {
    now: () => 0,
    beforeCommit: () => {
      store.searchIndex.flushQueue();
      if (fail) throw new Error('disk full');
    },
  });
  const ids = await Promise.all([queue.run(add(store, 1, 'parcel one')), queue.run(add(store, 2, 'parcel two'))]);
  assert.deepEqual(ids, [1, 2]);
  assert.deepEqual(errors, ['disk full']);
  assert.equal(found(store, 'parcel'), 0);
  assert.equal(store.searchIndex.queued(), 2, 'the queue was rolled back with the failed indexing');
  fail = false;
  await queue.run(add(store, 3, 'parcel three'));
  assert.equal(found(store, 'parcel'), 3);
  assert.equal(store.searchIndex.queued(), 0);
});

test('store.transaction (the CLI and console admin writes) indexes what it wrote before it commits', () => {
  const store = setup();
  store.transaction(add(store, 1, 'parcel one'));
  assert.equal(found(store, 'parcel'), 1);
  assert.equal(store.searchIndex.queued(), 0);
});

/**
 * Pages each of `commits` commits of 5 messages writes (WAL frames, never checkpointed), and the
 * index segments left, with the merge steps or with FTS5's own automerge and no steps. The texts
 * vary like customers' lines, so the trigram index grows as in use.
 */
function commitPages(merging: 'steps' | 'automerge', commits: number) {
  const path = join(mkdtempSync(join(tmpdir(), 'sb-fts-')), 's.db');
  const store = setup(path);
  const db = store.connection;
  // The test is about what a commit writes, not its durability: no fsync, and the WAL kept whole.
  db.exec('PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 0');
  if (merging === 'automerge') db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 4)");
  const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  const walPages = (): number => statSync(`${path}-wal`).size / (pageSize + 24);
  const words = 'parcel refund invoice password delivery warranty address coupon account order shipping tracking return exchange size colour payment card bank transfer discount voucher store opening hours holiday manager complaint broken damaged missing late early tomorrow today'.split(' ');
  const line = (n: number): string => {
    const w = (k: number): string => words[(n * k + (n >> 3)) % words.length]!;
    return `where is my ${w(7)} ${w(13)}, it is ${w(3)}: order ${(n * 7919) % 100003}, can you ${w(11)} the ${w(5)} ${w(17)}?`;
  };
  // What flushQueue does, without its merge step.
  const indexOnly = (): void => {
    db.exec('INSERT INTO messages_fts (rowid, content) SELECT q.id, m.content FROM messages_fts_queue q CROSS JOIN messages m ON m.id = q.id');
    db.exec('DELETE FROM messages_fts_queue');
  };
  const pages: number[] = [];
  let n = 0;
  for (let c = 0; c < commits; c++) {
    const before = walPages();
    const five = (): void => {
      for (let i = 0; i < 5; i++, n++) add(store, n, line(n))();
    };
    if (merging === 'steps') store.transaction(five);
    else {
      db.exec('BEGIN IMMEDIATE');
      five();
      indexOnly();
      db.exec('COMMIT');
    }
    pages.push(walPages() - before);
  }
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
  return { maxPages: Math.max(...pages), segments: segments(store), found: found(store, 'where is my') };
}

test('the search index merges a little at every commit, not in lumps: over 6,000 messages no commit of 5 writes more than 64 pages, where FTS5\'s automerge wrote hundreds, and segments stay few', () => {
  const steps = commitPages('steps', 1200);
  const automerge = commitPages('automerge', 1200);
  assert.equal(steps.found, 6000);
  assert.equal(automerge.found, 6000);
  assert.ok(automerge.maxPages > 200, `automerge's largest commit: ${automerge.maxPages} pages (the lump this test is about)`);
  assert.ok(steps.maxPages <= 64, `largest commit: ${steps.maxPages} pages`);
  // Without the steps nothing would merge until FTS5's crisis merge at 16 segments on level 0.
  assert.ok(steps.segments <= 12, `segments: ${steps.segments} (automerge left ${automerge.segments})`);
});
