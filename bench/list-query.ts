// node bench/list-query.ts [conversations=50000] [messages each=5]: the console list before and
// after issue 12's paging, same run, same data (a store built by direct INSERTs after migrate).
// Before: the call the console made (listConversations limit 20,000; needs-you limit 2,000), the
// whole answer serialised as the console API sends it. After: the console's first page (100 rows)
// and a page deep in the list through its cursor. Prints Markdown tables.
import { DatabaseSync } from 'node:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleQueries } from '../src/main/store/console-queries.ts';
import { seedList, oldList } from '../src/main/store/console-list.fixture.ts';
import type { ConversationFilter } from '../src/main/store/console-list.ts';
import { decodeCursor } from '../src/shared/list-cursor.ts';
import { medianMs } from './lib.ts';

const n = Number(process.argv[2] ?? 50_000);
const per = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'sb-list-'));
const db = new DatabaseSync(join(dir, 'list.db'));
db.exec('PRAGMA journal_mode = WAL');
const t0 = performance.now();
seedList(db, n, per);
db.exec('ANALYZE');
console.log(`store: ${n} conversations x ${per} messages, built in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
const queries = consoleQueries(db, () => new Map());
const kb = (v: unknown): string => `${(Buffer.byteLength(JSON.stringify(v)) / 1024).toFixed(0)} KiB`;
const now = 1000;
type F = Omit<ConversationFilter, 'limit' | 'now'>;
/** The cursor of the page that starts about `rows` rows into the list. */
const cursorAt = (f: F, rows: number): ConversationFilter['cursor'] => {
  let cursor: ConversationFilter['cursor'];
  for (let seen = 0; seen < rows; seen += 200) {
    const page = queries.conversations({ ...f, limit: 200, now, cursor });
    if (!page.nextCursor) break;
    cursor = decodeCursor(page.nextCursor);
  }
  return cursor;
};

const CASES: Array<[string, F, number]> = [
  ['all conversations', {}, 20_000],
  ['client b', { clientId: 'b' }, 20_000],
  ['state paused', { state: 'paused' }, 20_000],
  ['needs you', { view: 'needs_you' }, 2_000],
  ['search "order 4242 " (rare, message text)', { search: 'order 4242 ' }, 20_000],
  ['search "refund" (1 in 13 conversations)', { search: 'refund' }, 20_000],
  ['search "hello" (common)', { search: 'hello' }, 20_000],
  ['search "cust-4242" (customer id)', { search: 'cust-4242' }, 20_000],
];
console.log('| list | before: old call ms | before: size | after: first page (100) ms | after: size | ratio | page 20,000 rows in ms |');
console.log('|---|---|---|---|---|---|---|');
for (const [label, f, oldLimit] of CASES) {
  const before = medianMs(() => JSON.stringify(oldList(db, { ...f, limit: oldLimit, now })));
  const oldRows = oldList(db, { ...f, limit: oldLimit, now });
  const after = medianMs(() => JSON.stringify(queries.conversations({ ...f, limit: 100, now })));
  const first = queries.conversations({ ...f, limit: 100, now });
  const deep = cursorAt(f, 20_000);
  const deepMs = deep ? medianMs(() => queries.conversations({ ...f, limit: 100, now, cursor: deep })).toFixed(1) : 'n/a (shorter list)';
  console.log(`| ${label} | ${before.toFixed(1)} (${oldRows.length} rows) | ${kb(oldRows)} | ${after.toFixed(1)} (${first.items.length} rows) | ${kb(first)} | ${(before / after).toFixed(0)}x | ${deepMs} |`);
}
db.close();
rmSync(dir, { recursive: true, force: true });
