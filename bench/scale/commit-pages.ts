import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openDatabase } from '../../src/main/store/db.ts';
import { createStore } from '../../src/main/store/index.ts';
import { executeWrite } from '../../src/main/conversations/write-commands.ts';
import { canonicalJson } from '../../src/main/auth/canonical-json.ts';
import { clientSettingsSchema } from '../../src/shared/client-settings.ts';
import { scaleStore, SCALE_CLIENT } from './build.ts';
import { FULL_SHAPE } from './scenario.ts';

/**
 * What each group commit touches, on the million-entry store against an empty one (the baseline):
 * the writer's own write path (an auto_dialog message and its request-log row, four to a commit,
 * as under load at 10 connections), on a copy of bench/scale's store, with the WAL left to grow so
 * its size counts the frames written. Then again with the request log's two random-keyed lookup
 * indexes dropped, to weigh them.
 *   node bench/scale/commit-pages.ts            (BENCH_PAGES_MESSAGES, default 4000)
 */
const N = Number(process.env['BENCH_PAGES_MESSAGES'] ?? 4000);
const PER_COMMIT = 4;

async function measure(path: string, client: string): Promise<{ msPerMessage: number; framesPerCommit: number }> {
  const db = openDatabase(path);
  const store = createStore(db);
  if (!store.clients.get(client)) store.clients.create(client, clientSettingsSchema.parse({}), Date.now());
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.exec('PRAGMA wal_autocheckpoint = 0');
  const settings = clientSettingsSchema.parse({ sendUrl: 'http://127.0.0.1:9/hook' });
  const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  const walBytes = (): number => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  const before = walBytes();
  const started = performance.now();
  for (let n = 0; n < N; ) {
    db.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < PER_COMMIT; i++, n++) {
      const now = Date.now();
      const sender = (n * 7) % 20_000;
      const info = { event_type: 'auto_dialog', msg_id: `pages-${process.pid}-${n}-${now}`, from_user_id: `wx-${sender}`, from_user_nickname: `Customer ${sender}`, from_user_type: 2, content: `where is my parcel ${n}`, create_timestamp: Math.floor(now / 1000) };
      const canonicalInfo = canonicalJson(info);
      const contentHash = createHash('sha256').update(canonicalInfo).digest('hex');
      await executeWrite(store, { kind: 'auto_dialog', request: { requestId: `r${n}`, clientId: client, settings, info: info as never, canonicalInfo, contentHash, signature: contentHash, now } });
      const entry = { at: now, requestId: `req_pages_${n}_${now}`, method: 'POST', path: '/custom-im/chat-messages', clientId: client, eventType: 'auto_dialog', msgId: info.msg_id, conversationId: null, status: 200, code: null, latencyMs: 4, replayed: false, problem: null, remote: '127.0.0.1' };
      await executeWrite(store, { kind: 'request_log', entry: entry as never });
    }
    store.searchIndex.flushQueue();
    db.exec('COMMIT');
  }
  const ms = performance.now() - started;
  const frames = (walBytes() - before) / (pageSize + 24);
  store.close();
  return { msPerMessage: ms / N, framesPerCommit: frames / (N / PER_COMMIT) };
}

const built = await scaleStore(FULL_SHAPE, (line) => process.stderr.write(`bench/scale: ${line}\n`));
const dir = mkdtempSync(join(tmpdir(), 'sb-pages-'));
try {
  const full = join(dir, 'full.db');
  copyFileSync(join(built.dir, 'switchboard.db'), full);
  const empty = await measure(join(dir, 'empty.db'), SCALE_CLIENT);
  const onFull = await measure(full, SCALE_CLIENT);
  const index = new DatabaseSync(full);
  index.exec('DROP INDEX request_log_request; DROP INDEX request_log_msg');
  index.close();
  const lean = await measure(full, SCALE_CLIENT);
  const row = (what: string, r: { msPerMessage: number; framesPerCommit: number }): string =>
    `| ${what} | ${r.msPerMessage.toFixed(3)} | ${(r.msPerMessage / empty.msPerMessage).toFixed(2)}× | ${r.framesPerCommit.toFixed(1)} | ${(r.framesPerCommit / empty.framesPerCommit).toFixed(2)}× |`;
  console.log(`bench/scale commit pages: ${N} auto_dialog messages with their request-log rows, ${PER_COMMIT} to a commit, on the writer's path`);
  console.log('| store | ms per message | ÷ empty | WAL frames per commit | ÷ empty |\n|---|---:|---:|---:|---:|');
  console.log(row('empty (baseline)', empty));
  console.log(row('million-entry store', onFull));
  console.log(row('million-entry store, without request_log_request and request_log_msg', lean));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
