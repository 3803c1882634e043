import { parentPort, workerData } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';
import { mergeStepPages } from '../../src/main/store/search-index.ts';

// The floor's writer thread: a conversation row and two messages per request, one transaction per batch.
const { path, index } = workerData as { path: string; index: 'none' | 'automerge' | 'paced' };
const db = new DatabaseSync(path);
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 8192');
db.exec(`
  CREATE TABLE IF NOT EXISTS conversations (id INTEGER PRIMARY KEY, peer TEXT NOT NULL UNIQUE, last_message_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, msg_id TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL, content TEXT NOT NULL, content_hash TEXT NOT NULL, received_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS messages_conversation ON messages (conversation_id, id);
`);
if (index !== 'none') {
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(content, content = 'messages', content_rowid = 'id', tokenize = 'trigram')");
  if (index === 'paced') db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0)");
}
const conversation = db.prepare('INSERT INTO conversations (peer, last_message_at) VALUES (?, ?) ON CONFLICT (peer) DO UPDATE SET last_message_at = excluded.last_message_at RETURNING id');
// A body wrk sends again (its pool wrapped) is stored once, as Switchboard answers a replay.
const message = db.prepare('INSERT OR IGNORE INTO messages (conversation_id, msg_id, role, content, content_hash, received_at) VALUES (?, ?, ?, ?, ?, ?)');
const indexed = index === 'none' ? null : db.prepare('INSERT INTO messages_fts (rowid, content) VALUES (?, ?)');
const merge = index === 'paced' ? db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)") : null;

type Job = { id: number; peer: string; msgId: string; content: string; hash: string };
let queue: Job[] = [];
function commit(): void {
  const jobs = queue;
  queue = [];
  const now = Date.now();
  let chars = 0;
  try {
    db.exec('BEGIN');
    for (const job of jobs) {
      const { id } = conversation.get(job.peer, now) as { id: number };
      const answerText = `Thanks for asking about ${job.content.slice(0, 40)}: here is what we know.`;
      for (const [role, text, msgId] of [['customer', job.content, job.msgId], ['ai', answerText, `${job.msgId}:answer`]] as const) {
        const row = message.run(id, msgId, role, text, job.hash, now);
        if (Number(row.changes) === 0) continue;
        chars += text.length;
        indexed?.run(row.lastInsertRowid, text);
      }
    }
    if (chars > 0) merge?.run(mergeStepPages(chars));
    db.exec('COMMIT');
    parentPort!.postMessage({ ok: jobs.map((j) => j.id) });
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    parentPort!.postMessage({ failed: jobs.map((j) => j.id), error: (error as Error).message });
  }
}
parentPort!.on('message', (jobs: Job[]) => {
  if (queue.length === 0) setImmediate(commit);
  queue.push(...jobs);
});
