// node bench/list-query.ts [conversations] [messages each]: the console list query before and
// after issue 12's restructure (page first, then each row's last message), on a store built by
// direct INSERTs after migrate, same run, same data.
import { DatabaseSync } from 'node:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleQueries } from '../src/main/store/console-queries.ts';
import { seedList, oldList, FILTERS } from '../src/main/store/console-list.fixture.ts';

const n = Number(process.argv[2] ?? 50_000);
const per = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'sb-list-'));
const db = new DatabaseSync(join(dir, 'list.db'));
db.exec('PRAGMA journal_mode = WAL');
const t0 = performance.now();
seedList(db, n, per);
db.exec('ANALYZE');
console.log(`store: ${n} conversations x ${per} messages, built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const queries = consoleQueries(db, () => new Map());
const median = (f: () => unknown, runs = 7): number => {
  f();
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    f();
    t.push(performance.now() - s);
  }
  return t.sort((a, b) => a - b)[runs >> 1]!;
};
// Before: the old query on the schema as it was (no conversations_recent). After: the new query
// with migration 10. The old query with the index shows what the index alone does.
const rows = new Map<string, number[]>();
const time = (label: string, run: (f: (typeof FILTERS)[number]) => unknown) => {
  for (const f of FILTERS) {
    const key = JSON.stringify(f);
    rows.set(key, [...(rows.get(key) ?? []), median(() => run(f))]);
  }
  void label;
};
db.exec('DROP INDEX conversations_recent; ANALYZE');
time('old', (f) => oldList(db, { ...f, now: 1000 }));
db.exec('CREATE INDEX conversations_recent ON conversations(last_message_at DESC, id); ANALYZE');
time('old+index', (f) => oldList(db, { ...f, now: 1000 }));
time('new', (f) => queries.conversations({ ...f, now: 1000 }));
console.log('| filter | before ms | old query + index ms | after ms |\n|---|---|---|---|');
for (const [key, [a, b, c]] of rows) console.log(`| ${key} | ${a!.toFixed(1)} | ${b!.toFixed(1)} | ${c!.toFixed(1)} |`);
db.close();
rmSync(dir, { recursive: true, force: true });
