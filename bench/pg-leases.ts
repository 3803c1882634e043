import pg from 'pg';
import { startPostgres, postgresSkipReason } from '../test/helpers/postgres.ts';
import { createPgWorkQueue, type PgWorkQueue } from '../src/main/store/pg/leases/pg-leases.ts';
import { copyDatabase, createTemplate, seedDeliveries } from '../test/helpers/pg-work-fixture.ts';
import { fmt, percentile } from './lib.ts';

/**
 * bench/pg-leases: the PostgreSQL work queue (src/main/store/pg/leases, issue 30) drained by 1 and by 2
 * claimers at once, each a node of its own (its own pool), on a throwaway server
 * (test/helpers/postgres.ts). Deliveries: BENCH_LEASE_DELIVERIES pending, due, BENCH_LEASE_DEPTH
 * (10) per conversation, ids interleaved across conversations; each claimer claims up to 32 (at most one
 * per conversation across both), records each as sent, and claims again until nothing is left.
 * Reply timers: as many due conversations, claimed 32 at a time and finished. The floor: the same
 * deliveries recorded as sent by primary key with no claim (what recording alone costs), at the
 * same concurrency. Claimers alternate order across rounds; median (min–max) of the rounds.
 */
const DELIVERIES = Number(process.env['BENCH_LEASE_DELIVERIES'] ?? 10_000);
/** Pending deliveries per conversation: a claim reads about this many due rows per row it takes (only a conversation's oldest may go). */
const DEPTH = Number(process.env['BENCH_LEASE_DEPTH'] ?? 10);
const ROUNDS = Number(process.env['BENCH_LEASE_ROUNDS'] ?? 3);
const LIMIT = 32;
/** Completions in flight per claimer: a node sends its claimed batch at once. */
const POOL = 4;
const DURABLE = process.env['BENCH_PG_DURABLE'] !== '0';
const NOW = 1_800_000_000_000;

interface Sample {
  perSecond: number;
  claimP50: number;
  claimP99: number;
  claims: number;
}

async function drain(urls: string[], kind: 'deliveries' | 'replies' | 'floor'): Promise<Sample> {
  const pools = urls.map((url) => new pg.Pool({ connectionString: url, max: POOL }));
  const latencies: number[] = [];
  let done = 0;
  const started = performance.now();
  const claimer = async (name: string, pool: pg.Pool, q: PgWorkQueue): Promise<void> => {
    for (;;) {
      const t0 = performance.now();
      if (kind === 'floor') {
        // Each claimer takes its share of ids by key, as a claim would hand them out.
        const ids = (await pool.query<{ id: string }>(`SELECT id FROM deliveries WHERE state = 'pending' AND id % $1 = $2 LIMIT ${LIMIT}`, [urls.length, Number(name)])).rows;
        latencies.push(performance.now() - t0);
        if (ids.length === 0) return;
        await Promise.all(ids.map((r) => pool.query("UPDATE deliveries SET state = 'sent', attempts = attempts + 1, updated_at = $2 WHERE id = $1", [r.id, NOW])));
        done += ids.length;
        continue;
      }
      if (kind === 'deliveries') {
        const got = await q.claimDeliveries(name, NOW, LIMIT, 60_000);
        latencies.push(performance.now() - t0);
        if (got.length === 0) {
          const left = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE state = 'pending'");
          if (left.rows[0]!.n === 0) return;
          continue; // the next of a conversation waits for the other claimer's delivery in flight
        }
        const sent = { startedAt: NOW, durationMs: 1, outcome: { kind: 'sent' as const, status: 200 }, now: NOW };
        await Promise.all(got.map(async (d) => {
          if (!(await q.completeDelivery(d.id, d.lease, sent))) throw new Error(`lost delivery ${d.id}`);
        }));
        done += got.length;
        continue;
      }
      const got = await q.claimDueReplies(name, NOW, LIMIT, 60_000);
      latencies.push(performance.now() - t0);
      if (got.length === 0) return;
      await Promise.all(got.map(async (r) => {
        if ((await q.finishReply(r.conversationId, r.lease, r.lastMessageId)) !== 'done') throw new Error(`lost timer ${r.conversationId}`);
      }));
      done += got.length;
    }
  };
  await Promise.all(pools.map((pool, i) => claimer(String(i), pool, createPgWorkQueue(pool))));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(pools.map((p) => p.end()));
  const sorted = Float64Array.from(latencies).sort();
  return { perSecond: done / seconds, claimP50: percentile(sorted, 50), claimP99: percentile(sorted, 99), claims: latencies.length };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[], digits = 0): string => `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

export async function runPgLeases(): Promise<string> {
  const skip = postgresSkipReason();
  if (skip) return `## bench/pg-leases\n\nskipped: ${skip}`;
  const server = await startPostgres({ durable: DURABLE });
  try {
    await createTemplate(server.url, 'leases_template');
    const conversations = Math.ceil(DELIVERIES / DEPTH);
    let n = 0;
    const fresh = async (kind: 'deliveries' | 'replies' | 'floor'): Promise<string> => {
      const url = await copyDatabase(server.url, 'leases_template', `leases_${++n}`);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await seedDeliveries(c, { conversations, perConversation: DEPTH, dueFrom: NOW - 60_000, dueTo: NOW });
        if (kind === 'replies') await c.query('INSERT INTO due_replies (conversation_id, due_at, last_message_id) SELECT id, $1::bigint - (hashtext(id) & 65535), 1 FROM conversations', [NOW]);
        await c.query('VACUUM ANALYZE');
      } finally {
        await c.end();
      }
      return url;
    };
    const results = new Map<string, Sample[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const levels = round % 2 === 0 ? [1, 2] : [2, 1];
      for (const kind of ['floor', 'deliveries', 'replies'] as const) {
        for (const claimers of levels) {
          const url = await fresh(kind);
          const key = `${kind} ${claimers}`;
          results.set(key, [...(results.get(key) ?? []), await drain(Array.from({ length: claimers }, () => url), kind)]);
        }
      }
    }
    const rows = [...results].map(([key, samples]) => {
      const [kind, claimers] = key.split(' ');
      const what = kind === 'floor' ? 'floor: recorded by key, no claim' : kind === 'deliveries' ? 'deliveries claimed and recorded' : 'reply timers claimed and finished';
      return `| ${what} | ${claimers} | ${spread(samples.map((s) => s.perSecond))} | ${spread(samples.map((s) => s.claimP50), 2)} | ${spread(samples.map((s) => s.claimP99), 2)} | ${fmt(median(samples.map((s) => s.claims)))} |`;
    });
    return [
      `## bench/pg-leases (${DELIVERIES} deliveries in ${conversations} conversations; ${conversations} reply timers; fsync ${DURABLE ? 'on' : 'off'}; ${ROUNDS} rounds, median (min–max))`,
      '',
      '| work | claimers | rows/s | claim p50 ms | claim p99 ms | claims |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  } finally {
    await server.stop();
  }
}
