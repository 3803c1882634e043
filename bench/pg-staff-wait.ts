import pg from 'pg';
import { startPostgres, postgresSkipReason } from '../test/helpers/postgres.ts';
import { copyDatabase, createTemplate } from '../test/helpers/pg-work-fixture.ts';
import { pgStaffWaitQueries } from '../src/main/store/pg/staff-wait-queries.ts';
import { pgStore } from '../src/main/store/pg/pg-store.ts';
import { createPgWriter } from '../src/main/conversations/pg-writer.ts';
import { createStaffWaitWatch } from '../src/main/conversations/staff-wait.ts';
import { staffWaitNotBefore } from '../src/main/conversations/staff-wait-commands.ts';
import { manualClock } from '../src/shared/clock.ts';
import { fmt } from './lib.ts';

/**
 * bench/pg-staff-wait: what one node's staff-wait sweep (src/main/conversations/pg-staff-wait-sweep.ts)
 * costs on PostgreSQL, on a throwaway server (test/helpers/postgres.ts). BENCH_HELD (2,000)
 * conversations held by staff in the IM and written in within the last day, BENCH_LINES (20) lines
 * each, customer and staff in turn: 70 % answered by a staff line, 25 % with a customer line
 * waiting and not due yet, 5 % due (no node checked them). Beside them BENCH_ACTIVE (20,000)
 * conversations the bot answers, 10 lines each, which the sweep must not read. Timed, median
 * (min–max) of BENCH_ROUNDS (7) after one warm-up: the held-conversations statement alone; the
 * scan (store.staffWait.waiting, what start() and each sweep read), and the same as it was read
 * before the sweep came (that statement, then a query per conversation); the first sweep (the scan and
 * a check, in its transaction, of each due wait: they enter Needs you); a later sweep (they are
 * in Needs you: the scan alone, no check).
 */
const HELD = Number(process.env['BENCH_HELD'] ?? 2_000);
const LINES = Number(process.env['BENCH_LINES'] ?? 20);
const ACTIVE = Number(process.env['BENCH_ACTIVE'] ?? 20_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);
const NOW = 1_800_000_000_000;
const MIN = 60_000;
const WAIT = 10 * MIN;

async function seed(db: pg.Client): Promise<void> {
  await db.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('c1', 1, 1)");
  // Held: h1..hN; the last line of each is at NOW - (its number of minutes mod 600), within the day.
  await db.query(
    `INSERT INTO conversations (id, client_id, channel, peer, customer_id, auto_reply, created_at, last_message_at)
     SELECT 'h' || i, 'c1', 'im', 'u:h' || i, 'h' || i, 'stopped', 1, $2::bigint - (i % 600) * 60000 FROM generate_series(1, $1::int) i`,
    [HELD, NOW],
  );
  await db.query(
    `INSERT INTO conversations (id, client_id, channel, peer, customer_id, auto_reply, created_at, last_message_at)
     SELECT 'a' || i, 'c1', 'im', 'u:a' || i, 'a' || i, 'active', 1, $2::bigint - (i % 1440) * 60000 FROM generate_series(1, $1::int) i`,
    [ACTIVE, NOW],
  );
  // Line k of a held conversation, half a day ago: customer on even k, staff on odd k (LINES is
  // even: the one before the last is staff's). The shape (i % 20) picks the last line: 0, a
  // customer line 15 min old (due); 1..5, one 2 min old (waiting, not due); else a staff line.
  await db.query(
    `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_type, content, message_info, received_at, reply_scheduled, reply_reason)
     SELECT 'h' || i, 'c1', 'auto_dialog', 'h' || i || '-' || k,
       CASE WHEN (k < $2 AND k % 2 = 0) OR (k = $2 AND i % 20 <= 5) THEN 'customer' ELSE 'staff' END,
       CASE WHEN (k < $2 AND k % 2 = 0) OR (k = $2 AND i % 20 <= 5) THEN 2 ELSE 3 END, 'line ' || k, '{}',
       CASE WHEN k < $2 THEN $3::bigint - 86400000 / 2 + k * 60000 WHEN i % 20 = 0 THEN $3::bigint - 15 * 60000 ELSE $3::bigint - 2 * 60000 END,
       0, CASE WHEN (k < $2 AND k % 2 = 0) OR (k = $2 AND i % 20 <= 5) THEN 'auto_reply_stopped' END
     FROM generate_series(1, $1::int) i, generate_series(1, $2::int) k ORDER BY k, i`,
    [HELD, LINES, NOW],
  );
  await db.query(
    `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_type, content, message_info, received_at, reply_scheduled, reply_reason, reply_outcome)
     SELECT 'a' || i, 'c1', 'auto_dialog', 'a' || i || '-' || k, 'customer', 2, 'question ' || k, '{}', $2::bigint - 86400000 + k * 60000, 1, 'scheduled', 'answered'
     FROM generate_series(1, $1::int) i, generate_series(1, 10) k ORDER BY k, i`,
    [ACTIVE, NOW],
  );
  await db.query('VACUUM ANALYZE');
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]): string => `${fmt(median(xs), 1)} (${fmt(Math.min(...xs), 1)}–${fmt(Math.max(...xs), 1)})`;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

export async function runPgStaffWait(): Promise<string> {
  const skip = postgresSkipReason();
  if (skip) return `## bench/pg-staff-wait\n\nskipped: ${skip}`;
  const server = await startPostgres();
  try {
    await createTemplate(server.url, 'staff_wait_template');
    const template = await copyDatabase(server.url, 'staff_wait_template', 'staff_wait_seeded');
    const c = new pg.Client({ connectionString: template });
    await c.connect();
    try {
      await seed(c);
    } finally {
      await c.end();
    }
    const since = staffWaitNotBefore(NOW, WAIT, 0);
    const rows: Record<string, number[]> = { held: [], scan: [], perConversation: [], first: [], later: [] };
    let found = { waiting: 0, due: 0, alerts: 0 };
    for (let round = 0; round <= ROUNDS; round++) {
      const url = await copyDatabase(server.url, 'staff_wait_seeded', `staff_wait_${round}`);
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      try {
        const clock = manualClock(NOW);
        const q = pgStaffWaitQueries(pool);
        const watch = createStaffWaitWatch({
          writer: createPgWriter({ pool, storeOf: pgStore, settingsOf: () => undefined, log: () => {} }),
          clock,
          waitMs: WAIT,
          watchingSince: 0,
          waiting: (s) => q.waiting(s),
          onAlert: () => {},
          log: (line) => console.error(line),
        });
        await pool.query('SELECT 1'); // the connection, opened before the clock starts
        const heldSql = "SELECT id FROM conversations WHERE auto_reply <> 'active' AND needs_human = 0 AND last_message_at >= $1 ORDER BY last_message_at, id";
        const held = await timed(() => pool.query(heldSql, [since]));
        let waiting: Awaited<ReturnType<typeof q.waiting>> = [];
        const scan = await timed(async () => (waiting = await q.waiting(since)));
        let before = 0;
        const perConversation = await timed(async () => {
          for (const { id } of (await pool.query(heldSql, [since])).rows as Array<{ id: string }>) if (await q.firstUnanswered(id, since)) before++;
        });
        if (before !== waiting.length) throw new Error(`the scan found ${waiting.length} waiting, a query per conversation ${before}`);
        let alerts = 0;
        const first = await timed(async () => (alerts = await watch.sweep()));
        const later = await timed(() => watch.sweep());
        watch.stop();
        found = { waiting: waiting.length, due: waiting.filter((w) => w.receivedAt + WAIT <= NOW).length, alerts };
        // Round 0 warms the server's cache and the plans.
        if (round > 0) for (const [k, v] of Object.entries({ held, scan, perConversation, first, later })) rows[k]!.push(v);
      } finally {
        await pool.end();
      }
    }
    return [
      `## bench/pg-staff-wait (${fmt(HELD)} held conversations × ${LINES} lines, ${fmt(ACTIVE)} others × 10; ${ROUNDS} rounds, median (min–max) ms)`,
      '',
      `The scan found ${found.waiting} conversations with a customer waiting, ${found.due} of them due; the first sweep raised ${found.alerts} alerts.`,
      '',
      '| what | ms |',
      '|---|---|',
      `| the held conversations (one statement) | ${spread(rows['held']!)} |`,
      `| the scan: held conversations and each one's first unanswered line (store.staffWait.waiting, one statement) | ${spread(rows['scan']!)} |`,
      `| the same, a query per held conversation (the scan before the sweep came) | ${spread(rows['perConversation']!)} |`,
      `| first sweep: the scan, and a check of each due wait in its transaction | ${spread(rows['first']!)} |`,
      `| a later sweep: the due ones are in Needs you (the scan alone) | ${spread(rows['later']!)} |`,
    ].join('\n');
  } finally {
    await server.stop();
  }
}
