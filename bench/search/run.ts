/**
 * Message search at scale (issues 10 and 12). Builds a store in a temp dir with a documented
 * bulk insert (the schema's own tables, migrated as the app does, rows written in 1,000-row
 * transactions so the FTS triggers run as in the writer), then times the console's search
 * before (instr(lower()) over every message) and after (trigram index), and the writer's cost
 * per message with and without the index: 50,000 inserts, WAL, synchronous=FULL, 100 a batch.
 *   node bench/search/run.ts [messages=200000] [conversations=10000]
 */
import { DatabaseSync } from 'node:sqlite';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../src/main/store/migrate.ts';
import { MIGRATIONS } from '../../src/main/store/migrations/index.ts';
import { consoleQueries } from '../../src/main/store/console-queries.ts';
import { searchIndexQueries } from '../../src/main/store/search-index.ts';

const total = Number(process.argv[2] ?? 200_000);
const convs = Number(process.argv[3] ?? 10_000);
const WITHOUT_INDEX = MIGRATIONS.filter((m) => m.name !== 'message-search' && m.name !== 'search-index-queue');
const words = ['order', 'refund', 'parcel', 'delivery', 'price', 'hello', 'thanks', 'please', 'when', 'account', 'password', 'invoice'];
const zh = ['我想申请退款', '订单什么时候发货', '请问价格多少', '密码忘记了怎么办', '谢谢你的帮助', '包裹还没有到'];
let seed = 42;
const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
const text = (i: number) => (i % 3 === 0 ? `${zh[rnd(zh.length)]}，订单号 ${rnd(1e6)}` : `${Array.from({ length: 6 + rnd(8) }, () => words[rnd(words.length)]).join(' ')} #${rnd(1e6)}`);

function open(dir: string, name: string, migrations = MIGRATIONS): DatabaseSync {
  const db = new DatabaseSync(join(dir, name));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
  migrate(db, migrations);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  return db;
}

function fill(db: DatabaseSync, n: number, conversations: number, batch: number): number {
  const conv = db.prepare("INSERT INTO conversations (id, client_id, channel, peer, customer_id, created_at, last_message_at) VALUES (?, 'a', 'im', ?, ?, 0, ?)");
  db.exec('BEGIN');
  for (let c = 0; c < conversations; c++) conv.run(`c${c}`, `u:${c}`, `cust-${c}`, c);
  db.exec('COMMIT');
  const msg = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES (?, 'a', 'auto_dialog', ?, 'customer', ?, '{}', ?)");
  const index = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_queue'").get() ? searchIndexQueries(db) : null;
  const start = performance.now();
  for (let i = 0; i < n; i += batch) {
    db.exec('BEGIN');
    for (let j = i; j < Math.min(n, i + batch); j++) msg.run(`c${j % conversations}`, `m${j}`, text(j), j);
    // As the writer does before each commit (the 'without index' schema has no queue).
    if (index) index.flushQueue();
    db.exec('COMMIT');
  }
  return performance.now() - start;
}

const dir = mkdtempSync(join(tmpdir(), 'sb-search-'));
try {
  for (const [label, migrations] of [['without index', WITHOUT_INDEX], ['with index', MIGRATIONS]] as const) {
    const db = open(dir, `writer-${label.replace(' ', '-')}.db`, migrations);
    const ms = fill(db, 50_000, 2_000, 100);
    console.log(`writer ${label}: ${((ms * 1000) / 50_000).toFixed(1)} µs/message (50k, batches of 100, synchronous=FULL)`);
    db.close();
  }
  const db = open(dir, 'scale.db');
  const built = fill(db, total, convs, 1_000);
  console.log(`built ${total} messages in ${convs} conversations in ${(built / 1000).toFixed(1)} s; db ${(statSync(join(dir, 'scale.db')).size / 2 ** 20).toFixed(0)} MiB (+wal)`);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const fts = db.prepare("SELECT sum(length(block)) AS b FROM messages_fts_data").get() as { b: number };
  console.log(`fts index ${(fts.b / 2 ** 20).toFixed(0)} MiB, db ${(statSync(join(dir, 'scale.db')).size / 2 ** 20).toFixed(0)} MiB`);
  const q = consoleQueries(db, () => new Map());
  const oldSql = db.prepare(`SELECT c.id FROM conversations c WHERE (c.customer_id LIKE ? ESCAPE '\\' OR c.customer_name LIKE ? ESCAPE '\\' OR c.group_id LIKE ? ESCAPE '\\'
       OR EXISTS (SELECT 1 FROM messages s WHERE s.conversation_id = c.id AND instr(lower(s.content), ?) > 0)) ORDER BY c.last_message_at DESC, c.id LIMIT 200`);
  const time = (f: () => unknown) => { const t = []; for (let i = 0; i < 5; i++) { const s = performance.now(); f(); t.push(performance.now() - s); } return t.sort((a, b) => a - b)[2]!; };
  for (const s of ['#123456', '订单号 99', 'order refund', '申请退款', 'zzzz-none', 'refund', '退款', 'ab']) {
    const pat = `%${s}%`;
    const before = time(() => oldSql.all(pat, pat, pat, s.toLowerCase()));
    const after = time(() => q.conversations({ search: s, limit: 200, now: 0 }));
    // Pages now list message matches newest match first: compare as sets, where both found them all.
    const hits = q.conversations({ search: s, limit: 200, now: 0 }).items.map((c) => c.id);
    const same = hits.length === 200 || JSON.stringify([...hits].sort()) === JSON.stringify((oldSql.all(pat, pat, pat, s.toLowerCase()) as Array<{ id: string }>).map((r) => r.id).sort());
    console.log(`search ${JSON.stringify(s).padEnd(20)} before ${before.toFixed(1).padStart(7)} ms  after ${after.toFixed(1).padStart(7)} ms  (${hits.length} of limit 200, ${same ? 'same rows' : 'DIFFERENT rows'})`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
