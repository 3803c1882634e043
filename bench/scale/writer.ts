import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { openDatabase, WRITER_WAL_AUTOCHECKPOINT_PAGES, type Db } from '../../src/main/store/db.ts';
import { createStore } from '../../src/main/store/index.ts';
import { executeWrite, type WriteCommand } from '../../src/main/conversations/write-commands.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../src/shared/client-settings.ts';
import { fmt } from '../lib.ts';
import { scaleStore, copyStore, prepareDataDir, SCALE_CLIENT } from './build.ts';
import { FULL_SHAPE } from './scenario.ts';

/**
 * bench/scale/writer (issue 12): what one auto_dialog message costs the writer thread on the
 * 1,000,000-entry store against an empty one, with the writer's own statements (executeWrite:
 * the message, its idempotency record, the conversation's counters, its request-log row, and
 * the batch's search indexing before the commit) in group transactions of BENCH_WRITER_BATCH messages, synchronous=FULL.
 * Full store: the senders are its customers (conversations with history); empty: each message
 * opens a conversation, as in the ingest measure. Per WAL checkpoint setting, alternating:
 * SQLite's default of 1000 pages, the writer's WRITER_WAL_AUTOCHECKPOINT_PAGES (also with a 32 MiB page cache:
 * BENCH_WRITER_CACHE_KIB), and none (WAL
 * pages written per message, and the floor).
 *   node bench/scale/writer.ts
 * Environment: BENCH_WRITER_BATCHES (300), BENCH_WRITER_BATCH (8), BENCH_WRITER_ROUNDS (2).
 */
const BATCHES = Number(process.env['BENCH_WRITER_BATCHES'] ?? 300);
const PER = Number(process.env['BENCH_WRITER_BATCH'] ?? 8);
const ROUNDS = Number(process.env['BENCH_WRITER_ROUNDS'] ?? 2);
interface Setting { pages: number; cacheKiB: number | null; mmapMiB?: number }
const SETTINGS: Setting[] = [
  { pages: 1000, cacheKiB: null },
  { pages: WRITER_WAL_AUTOCHECKPOINT_PAGES, cacheKiB: null },
  { pages: WRITER_WAL_AUTOCHECKPOINT_PAGES, cacheKiB: Number(process.env['BENCH_WRITER_CACHE_KIB'] ?? 32768) },
  { pages: WRITER_WAL_AUTOCHECKPOINT_PAGES, cacheKiB: null, mmapMiB: 2048 },
  { pages: 0, cacheKiB: null },
];

/** Written back now, so the kernel does not flush a gigabyte of copy during the measures. */
function syncDir(dir: string): void {
  for (const name of readdirSync(dir)) {
    const fd = openSync(join(dir, name), 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
}

interface Run { statementsMs: number; commitMs: number; walPages: number | null }

let serial = 0;
async function run(db: Db, { pages: checkpointPages, cacheKiB, mmapMiB }: Setting, senders: number): Promise<Run> {
  db.exec(`PRAGMA mmap_size = ${(mmapMiB ?? 0) * 1024 * 1024}`);
  const store = createStore(db);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.exec(`PRAGMA wal_autocheckpoint = ${checkpointPages}`);
  db.exec(`PRAGMA cache_size = -${cacheKiB ?? 2000}`);
  let statements = 0;
  let commits = 0;
  for (let b = 0; b < BATCHES; b++) {
    db.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    for (let i = 0; i < PER; i++) {
      const n = serial++;
      const now = Date.now();
      const info = { event_type: 'auto_dialog' as const, msg_id: `w-${process.pid}-${n}`, from_user_id: `cust-${(n * 7919) % senders}`, from_user_type: 2, content: `where is my parcel ${n}, it says shipped`, create_timestamp: Math.floor(now / 1000) };
      const canonicalInfo = JSON.stringify(info);
      const requestId = `req-${process.pid}-${n}`;
      const request = { requestId, clientId: SCALE_CLIENT, settings: DEFAULT_CLIENT_SETTINGS, info, canonicalInfo, contentHash: createHash('sha256').update(canonicalInfo).digest('hex'), signature: 'x', now };
      db.exec('SAVEPOINT job');
      await executeWrite(store, { kind: 'auto_dialog', request } as WriteCommand);
      db.exec('RELEASE job');
      await executeWrite(store, { kind: 'request_log', entry: { at: now, requestId, method: 'POST', path: '/custom-im/chat-messages', clientId: SCALE_CLIENT, eventType: 'auto_dialog', msgId: info.msg_id, conversationId: null, status: 200, code: null, latencyMs: 1, replayed: false, problem: null, remote: '127.0.0.1', verified: true } });
    }
    // As the writer's queue does before each commit: the batch's messages into the search index.
    store.searchIndex.flushQueue();
    const committing = performance.now();
    statements += committing - started;
    db.exec('COMMIT');
    commits += performance.now() - committing;
  }
  const log = checkpointPages === 0 ? (db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number }).log : null;
  db.exec('PRAGMA wal_autocheckpoint = 1000');
  return { statementsMs: statements / BATCHES / PER, commitMs: commits / BATCHES, walPages: log === null ? null : log / BATCHES / PER };
}

export async function runWriter(): Promise<string> {
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
  const built = await scaleStore(FULL_SHAPE, (line) => process.stderr.write(`bench/scale/writer: ${line}\n`));
  const fullDir = copyStore(built.dir, 'sb-bench-writer-');
  const emptyDir = mkdtempSync(join(tmpdir(), 'sb-bench-writer-empty-'));
  try {
    syncDir(fullDir);
    prepareDataDir(emptyDir, 'http://127.0.0.1:9/hook');
    const dbs = { empty: openDatabase(join(emptyDir, 'switchboard.db')), full: openDatabase(join(fullDir, 'switchboard.db')) };
    const senders = { empty: 1_000_000, full: FULL_SHAPE.conversations };
    const results = new Map<string, Run[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, setting] of SETTINGS.entries()) {
        for (const which of ['empty', 'full'] as const) {
          const key = `${which} ${i}`;
          results.set(key, [...(results.get(key) ?? []), await run(dbs[which], setting, senders[which])]);
        }
      }
    }
    dbs.empty.close();
    dbs.full.close();
    const mean = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
    const rows = SETTINGS.flatMap(({ pages, cacheKiB, mmapMiB }, i) =>
      (['empty', 'full'] as const).map((which) => {
        const r = results.get(`${which} ${i}`)!;
        const wal = r[0]!.walPages === null ? '' : fmt(mean(r.map((x) => x.walPages!)), 1);
        const label = pages === 0 ? 'none (floor)' : `${fmt(pages)} pages${pages === WRITER_WAL_AUTOCHECKPOINT_PAGES ? ' (the writer)' : pages === 1000 ? ' (SQLite default)' : ''}${cacheKiB === null ? '' : `, page cache ${fmt(cacheKiB / 1024)} MiB`}${mmapMiB ? `, mmap ${fmt(mmapMiB)} MiB` : ''}`;
        return `| ${which} | ${label} | ${fmt(mean(r.map((x) => x.statementsMs)), 3)} | ${fmt(mean(r.map((x) => x.commitMs)), 2)} | ${fmt(mean(r.map((x) => x.statementsMs + x.commitMs / PER)), 3)} | ${wal} |`;
      }),
    );
    return [
      `bench/scale/writer: ${ROUNDS} rounds × ${BATCHES} transactions of ${PER} auto_dialog messages (and their request-log rows) per store and checkpoint setting, alternating; synchronous=FULL. Load average before: ${loadBefore}; after: ${readFileSync('/proc/loadavg', 'utf8').trim()}.`,
      '| store | WAL checkpoint at (page cache 2 MiB unless said) | statements ms / message | commit ms / transaction | writer ms / message | WAL pages / message |',
      '|---|---|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  } finally {
    rmSync(fullDir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runWriter());
