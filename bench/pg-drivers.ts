import pg from 'pg';
import postgres from 'postgres';
import { startPostgres, postgresSkipReason } from '../test/helpers/postgres.ts';
import { fmt, percentile } from './lib.ts';

/**
 * bench/pg-drivers: node-postgres (pg) against Postgres.js (postgres) on Switchboard's ingest hot
 * path as SQL (issue 30): one transaction per message that checks idempotency, upserts the
 * conversation (last_message_at, counters), inserts the message (UNIQUE (client_id, msg_id)) and
 * records the accepted request (UNIQUE signature: replay protection held by the database). One in
 * 20 messages is a resend of an earlier one, answered from the idempotency row. Each driver runs
 * the same statements, prepared, through its own pool sized to the concurrency, on a throwaway
 * server (test/helpers/postgres.ts) over TCP on 127.0.0.1; `SELECT 1` per driver is the floor.
 * Drivers alternate (the order flips each round), every round runs both levels, 3 rounds.
 */
const TX = Number(process.env['BENCH_PG_TX'] ?? 5000);
const ROUNDS = Number(process.env['BENCH_PG_ROUNDS'] ?? 3);
const LEVELS = (process.env['BENCH_PG_LEVELS'] ?? '1,10').split(',').map(Number);
// fsync + synchronous_commit as a production server runs; BENCH_PG_DURABLE=0 shows the drivers' own cost.
const DURABLE = process.env['BENCH_PG_DURABLE'] !== '0';
const WARMUP = 300;
const PEERS = 2000;
const REPLAY_EVERY = 20;

const SCHEMA = `
  CREATE TABLE conversations (
    id text PRIMARY KEY,
    client_id text NOT NULL,
    channel text NOT NULL CHECK (channel IN ('im', 'web')),
    peer text NOT NULL,
    auto_reply text NOT NULL DEFAULT 'active',
    needs_human boolean NOT NULL DEFAULT false,
    message_count integer NOT NULL DEFAULT 0,
    unread integer NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    last_message_at bigint NOT NULL,
    UNIQUE (client_id, channel, peer)
  );
  CREATE INDEX conversations_recent ON conversations (last_message_at DESC, id);
  CREATE TABLE messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id text NOT NULL REFERENCES conversations (id),
    client_id text NOT NULL,
    event_type text NOT NULL,
    msg_id text NOT NULL,
    role text NOT NULL,
    from_user_id text,
    content text,
    message_info jsonb NOT NULL,
    received_at bigint NOT NULL,
    reply_outcome text,
    UNIQUE (client_id, msg_id)
  );
  CREATE INDEX messages_conversation ON messages (conversation_id, id);
  CREATE INDEX messages_pending ON messages (id) WHERE reply_outcome = 'pending';
  CREATE TABLE idempotency (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id text NOT NULL,
    event_type text NOT NULL,
    msg_id text NOT NULL,
    content_hash text NOT NULL,
    status integer NOT NULL,
    response text NOT NULL,
    conversation_id text NOT NULL,
    message_id bigint,
    signature text NOT NULL,
    created_at bigint NOT NULL,
    UNIQUE (client_id, event_type, msg_id),
    UNIQUE (client_id, signature)
  );
  CREATE INDEX idempotency_created ON idempotency (created_at);
`;

const SQL = {
  seen: 'SELECT status, response, conversation_id FROM idempotency WHERE client_id = $1 AND event_type = $2 AND msg_id = $3',
  conversation: `INSERT INTO conversations (id, client_id, channel, peer, message_count, unread, created_at, last_message_at)
    VALUES ($1, $2, 'im', $3, 1, 1, $4, $4)
    ON CONFLICT (client_id, channel, peer) DO UPDATE SET message_count = conversations.message_count + 1,
      unread = conversations.unread + 1, last_message_at = greatest(conversations.last_message_at, excluded.last_message_at)
    RETURNING id`,
  message: `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at, reply_outcome)
    VALUES ($1, $2, 'auto_dialog', $3, 'customer', $4, $5, $6, $7, 'pending') RETURNING id`,
  accepted: `INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, conversation_id, message_id, signature, created_at)
    VALUES ($1, 'auto_dialog', $2, $3, 200, $4, $5, $6, $7, $8)`,
};

interface Message {
  clientId: string;
  msgId: string;
  peer: string;
  content: string;
  info: string;
  hash: string;
  signature: string;
  at: number;
}

/**
 * Message n of a run. With `resendsOf` (the warm-up's run, all committed), every REPLAY_EVERY-th
 * is a resend of one of its messages: a resend of a message still in flight would be a concurrent
 * duplicate, a different case (the second waits on the first's unique key, then fails).
 */
function messageOf(run: string, n: number, resendsOf: string | null = null): Message {
  if (resendsOf !== null && n > 0 && n % REPLAY_EVERY === 0) return messageOf(resendsOf, (n / REPLAY_EVERY) % WARMUP);
  const peer = `user-${(n * 7919) % PEERS}`;
  const content = `How do I change the delivery address of order ${n}? 我想修改订单地址`;
  return {
    clientId: 'bench',
    msgId: `${run}-${n}`,
    peer,
    content,
    info: JSON.stringify({ from_user_id: peer, from_user_type: 1, content, create_timestamp: 1_700_000_000 + n }),
    hash: `h${n.toString(16).padStart(63, '0')}`,
    signature: `${run}-sig-${n}`,
    at: Date.now(),
  };
}

const response = (m: Message, conversationId: string): string => JSON.stringify({ code: 0, msg: 'ok', data: { msg_id: m.msgId, conversation_id: conversationId } });

interface Driver {
  name: string;
  /** One ingest transaction; true when it stored a message, false when it was a resend. */
  ingest(m: Message): Promise<boolean>;
  selectOne(): Promise<void>;
  close(): Promise<void>;
}

function nodePostgres(url: string, max: number): Driver {
  const pool = new pg.Pool({ connectionString: url, max });
  // Named statements: prepared once per connection, as Postgres.js does by default.
  const q = (name: keyof typeof SQL, values: unknown[]) => ({ name, text: SQL[name], values });
  return {
    name: 'pg (node-postgres)',
    async ingest(m) {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const seen = await c.query(q('seen', [m.clientId, 'auto_dialog', m.msgId]));
        if (seen.rowCount) {
          await c.query('COMMIT');
          return false;
        }
        const conv = await c.query<{ id: string }>(q('conversation', [`c-${m.clientId}-${m.peer}`, m.clientId, m.peer, m.at]));
        const convId = conv.rows[0]!.id;
        const msg = await c.query<{ id: string }>(q('message', [convId, m.clientId, m.msgId, m.peer, m.content, m.info, m.at]));
        await c.query(q('accepted', [m.clientId, m.msgId, m.hash, response(m, convId), convId, msg.rows[0]!.id, m.signature, m.at]));
        await c.query('COMMIT');
        return true;
      } catch (e) {
        await c.query('ROLLBACK');
        throw e;
      } finally {
        c.release();
      }
    },
    async selectOne() {
      await pool.query({ name: 'one', text: 'SELECT 1' });
    },
    close: () => pool.end(),
  };
}

function postgresJs(url: string, max: number): Driver {
  const sql = postgres(url, { max, onnotice: () => undefined });
  return {
    name: 'postgres (Postgres.js)',
    async ingest(m) {
      return await sql.begin(async (t) => {
        const seen = await t.unsafe(SQL.seen, [m.clientId, 'auto_dialog', m.msgId], { prepare: true });
        if (seen.length) return false;
        const [conv] = await t.unsafe<Array<{ id: string }>>(SQL.conversation, [`c-${m.clientId}-${m.peer}`, m.clientId, m.peer, m.at], { prepare: true });
        const [msg] = await t.unsafe<Array<{ id: string }>>(SQL.message, [conv!.id, m.clientId, m.msgId, m.peer, m.content, m.info, m.at], { prepare: true });
        await t.unsafe(SQL.accepted, [m.clientId, m.msgId, m.hash, response(m, conv!.id), conv!.id, msg!.id, m.signature, m.at], { prepare: true });
        return true;
      });
    },
    async selectOne() {
      await sql`SELECT 1`;
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

const DRIVERS = [nodePostgres, postgresJs];

interface Sample {
  txPerSecond: number;
  p50: number;
  p99: number;
  /** This process's CPU (user + system) per transaction: what the driver costs a node. */
  cpuUs: number;
}

/** `count` calls of `op` from `concurrency` closed-loop workers. */
async function measure(concurrency: number, count: number, op: (n: number) => Promise<unknown>): Promise<Sample> {
  const latencies = new Float64Array(count);
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = next++; n < count; n = next++) {
        const t = performance.now();
        await op(n);
        latencies[n] = performance.now() - t;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort();
  return { txPerSecond: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs: (used.user + used.system) / count };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const spread = (xs: number[], digits: number): string =>
  `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

export async function runPgDrivers(): Promise<string> {
  const skip = postgresSkipReason();
  if (skip) return `pg-drivers: skipped: ${skip}`;
  const server = await startPostgres({ durable: DURABLE });
  try {
    const setup = new pg.Client(server.url);
    await setup.connect();
    await setup.query(SCHEMA);
    await setup.end();

    // results[driver][level][kind] = samples over the rounds
    const results = new Map<string, Map<number, { floor: Sample[]; ingest: Sample[] }>>();
    let runs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const level of LEVELS) {
        const order = round % 2 === 0 ? DRIVERS : [...DRIVERS].reverse();
        for (const make of order) {
          const driver = make(server.url, level);
          const run = `r${runs++}`;
          // Warm-up: every connection of the pool open and its statements prepared.
          await measure(level, WARMUP, (n) => driver.ingest(messageOf(`${run}w`, n)));
          await measure(level, WARMUP, () => driver.selectOne());
          const floor = await measure(level, TX, () => driver.selectOne());
          let stored = 0;
          const ingest = await measure(level, TX, async (n) => {
            if (await driver.ingest(messageOf(run, n, `${run}w`))) stored++;
          });
          const expected = TX - Math.floor((TX - 1) / REPLAY_EVERY);
          if (stored !== expected) throw new Error(`${driver.name}: stored ${stored} messages of ${TX}, expected ${expected} (resends must be answered, not stored)`);
          await driver.close();
          const byLevel = results.get(driver.name) ?? new Map();
          results.set(driver.name, byLevel);
          const slot = byLevel.get(level) ?? { floor: [], ingest: [] };
          byLevel.set(level, slot);
          slot.floor.push(floor);
          slot.ingest.push(ingest);
          console.error(`pg-drivers: round ${round + 1} level ${level} ${driver.name}: ${fmt(ingest.txPerSecond)} tx/s, floor ${fmt(floor.txPerSecond)}/s`);
        }
      }
    }

    const lines = [
      `## pg-drivers: ingest transaction (idempotency check, conversation upsert, message insert, accepted-request row), ${fmt(TX)} per run, ${ROUNDS} rounds, drivers alternating`,
      '',
      `PostgreSQL ${DURABLE ? 'durable (fsync on, synchronous_commit on)' : 'not durable (fsync off, synchronous_commit off): the drivers’ own cost'}, over TCP on 127.0.0.1, same machine. Median (min–max) over the rounds.`,
      '',
      '| driver | clients | what | tx/s | p50 ms | p99 ms | client CPU µs/tx |',
      '|---|---|---|---|---|---|---|',
    ];
    for (const level of LEVELS) {
      for (const [name, byLevel] of results) {
        const slot = byLevel.get(level)!;
        for (const [what, samples] of [['SELECT 1 (floor)', slot.floor], ['ingest tx', slot.ingest]] as const) {
          lines.push(
            `| ${name} | ${level} | ${what} | ${spread(samples.map((s) => s.txPerSecond), 0)} | ${spread(samples.map((s) => s.p50), 2)} | ${spread(samples.map((s) => s.p99), 2)} | ${spread(samples.map((s) => s.cpuUs), 0)} |`,
          );
        }
      }
    }
    return lines.join('\n');
  } finally {
    await server.stop();
  }
}
