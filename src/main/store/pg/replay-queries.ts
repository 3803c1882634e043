import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { staleRunErrorParts, type PastQuestion, type ReplayClaim, type ReplayRowInput, type ReplayRunRow } from '../replay.ts';
import { CHANNELS } from '../../../shared/conversation.ts';
import {
  REPLAY_CHANGES,
  REPLAY_STATUSES,
  replayParamsSchema,
  replayRowSideSchema,
  replayTotalsSchema,
  type ReplayParams,
  type ReplayStatus,
  type ReplayTotals,
} from '../../../shared/console-replay.ts';
import { int8, type PgQueryable } from './pool.ts';

const runSchema = z.object({
  id: int8,
  created_at: int8,
  finished_at: int8.nullable(),
  status: z.enum(REPLAY_STATUSES),
  started_by: z.object({ id: z.string(), name: z.string() }).nullable(),
  params: replayParamsSchema,
  totals: z.record(z.string(), z.unknown()),
  error: z.string().nullable(),
  node_id: z.string().nullable(),
  heartbeat_at: int8.nullable(),
  progress_done: z.number().int().nullable(),
  progress_total: z.number().int().nullable(),
  cancel_requested_at: int8.nullable(),
});

const rowSchema = z.object({
  message_id: int8,
  conversation_id: z.string(),
  client_id: z.string(),
  event_type: z.string(),
  question: z.string(),
  asked_at: int8,
  before: replayRowSideSchema,
  after: replayRowSideSchema,
  change: z.enum(REPLAY_CHANGES),
});

const questionSchema = z.object({
  id: int8,
  conversation_id: z.string(),
  client_id: z.string(),
  event_type: z.enum(['auto_dialog', 'website_dialog']),
  content: z.string(),
  received_at: int8,
  channel: z.enum(CHANNELS),
  group_id: z.string().nullable(),
  assisted: z.boolean(),
});

// Rows are re-read through their schemas: a run saved by another version reads as it is or not at all.
const toRun = (raw: unknown): ReplayRunRow => {
  const r = runSchema.parse(raw);
  return {
    id: r.id,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    status: r.status,
    startedBy: r.started_by,
    params: r.params,
    totals: Object.keys(r.totals).length > 0 ? replayTotalsSchema.parse(r.totals) : null,
    error: r.error,
    owner:
      r.node_id === null
        ? null
        : { nodeId: r.node_id, heartbeatAt: r.heartbeat_at ?? r.created_at, done: r.progress_done ?? 0, total: r.progress_total ?? 0, cancelRequestedAt: r.cancel_requested_at },
  };
};

const startedByJson = (startedBy: { id: string; name: string } | null): string | null => (startedBy ? JSON.stringify({ id: startedBy.id, name: startedBy.name }) : null);

const toRow = (raw: unknown): ReplayRowInput => {
  const r = rowSchema.parse(raw);
  return { messageId: r.message_id, conversationId: r.conversation_id, clientId: r.client_id, eventType: r.event_type, question: r.question, askedAt: r.asked_at, before: r.before, after: r.after, change: r.change };
};

/**
 * Replay runs and the past questions they read (replay.ts) on PostgreSQL: the same rows and order.
 *
 * Several nodes share the runs (migration 8). A console's run is its node's: claimRun makes it
 * with the node's id, and the partial unique index replay_runs_one_running lets one such run be
 * running in the whole installation, so two nodes starting at once cannot both win. The node
 * renews the run's heartbeat (with its progress) every few seconds; a run whose heartbeat is older
 * than the time-out is failed as its node stopped (failStale: at a node's start, in a claim, and
 * when a console reads a stale run), and a live run on another node is never touched. Another
 * node's cancel is a request on the row, which the owner reads at its next heartbeat.
 * interruptRunning (every running run failed) stays SQLite's: one process owns that store.
 */
export function pgReplayQueries(db: PgQueryable): StoreContract['replay'] {
  /** The lowest message id received at or after `from`: the same binary search as SQLite's, so the same window. */
  async function firstIdFrom(from: number): Promise<number> {
    let lo = 1;
    let hi = int8.parse((await db.query('SELECT coalesce(max(id), 0) AS id FROM messages')).rows[0].id) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = (await db.query('SELECT received_at FROM messages WHERE id >= $1 ORDER BY id LIMIT 1', [mid])).rows[0];
      if (row === undefined || int8.parse(row.received_at) >= from) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  async function failStale(now: number, staleMs: number): Promise<number> {
    const [head, noNode, tail] = staleRunErrorParts(staleMs);
    const r = await db.query(
      `UPDATE replay_runs SET status = 'failed', finished_at = $1, error = $2::text || coalesce(node_id, $3::text) || $4::text
       WHERE status = 'running' AND coalesce(heartbeat_at, created_at) < $5`,
      [now, head, noNode, tail, now - staleMs],
    );
    return r.rowCount ?? 0;
  }

  return {
    async questions(filter: { from: number; to: number; clientId: string | null; limit: number }): Promise<PastQuestion[]> {
      const r = await db.query(
        `SELECT * FROM (
           SELECT m.id, m.conversation_id, m.client_id, m.event_type, m.content, m.received_at, m.reply_scheduled, c.channel, c.group_id,
                  EXISTS (SELECT 1 FROM replies r WHERE r.conversation_id = m.conversation_id AND r.after_message_id = m.id AND r.kind = 'suggestion') AS assisted
           FROM messages m JOIN conversations c ON c.id = m.conversation_id
           WHERE m.id >= $1 AND m.received_at >= $2 AND m.received_at < $3
             AND ($4::text IS NULL OR m.client_id = $4)
             AND m.role = 'customer' AND m.content IS NOT NULL AND trim(m.content) != ''
             AND m.event_type IN ('website_dialog', 'auto_dialog')
         ) q
         WHERE q.event_type = 'website_dialog' OR q.reply_scheduled = 1 OR q.assisted
         ORDER BY q.id LIMIT $5`,
        [await firstIdFrom(filter.from), filter.from, filter.to, filter.clientId, filter.limit],
      );
      return r.rows.map((raw) => {
        const q = questionSchema.parse(raw);
        return {
          messageId: q.id,
          conversationId: q.conversation_id,
          clientId: q.client_id,
          eventType: q.event_type,
          assisted: q.assisted,
          content: q.content,
          receivedAt: q.received_at,
          channel: q.channel,
          isGroup: q.group_id !== null,
        };
      });
    },
    async startRun(params: ReplayParams, startedBy: { id: string; name: string } | null, now: number): Promise<number> {
      const r = await db.query("INSERT INTO replay_runs (created_at, status, started_by, params) VALUES ($1, 'running', $2::jsonb, $3::jsonb) RETURNING id", [now, startedByJson(startedBy), JSON.stringify(params)]);
      return int8.parse(r.rows[0].id);
    },
    /**
     * A run for the node, unless another is running anywhere. Stale runs are failed first. The
     * insert then adds nothing while a run is running (so a refusal takes no id, as on SQLite),
     * and the partial unique index refuses it when another node's claim got in meanwhile (the
     * later one waits for the other's commit, then does nothing). Each statement commits on its
     * own: the index, not a transaction, is what makes two claims exclusive.
     */
    async claimRun(params: ReplayParams, startedBy: { id: string; name: string } | null, now: number, claim: { nodeId: string; total: number; staleMs: number }): Promise<ReplayClaim> {
      await failStale(now, claim.staleMs);
      // A refusing run may end between the insert and the look for it: then the claim is tried again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const made = await db.query(
          `INSERT INTO replay_runs (created_at, status, started_by, params, node_id, heartbeat_at, progress_done, progress_total)
           SELECT $1, 'running', $2::jsonb, $3::jsonb, $4, $1, 0, $5
           WHERE NOT EXISTS (SELECT 1 FROM replay_runs WHERE status = 'running')
           ON CONFLICT (status) WHERE status = 'running' AND node_id IS NOT NULL DO NOTHING
           RETURNING id`,
          [now, startedByJson(startedBy), JSON.stringify(params), claim.nodeId, claim.total],
        );
        if (made.rows[0] !== undefined) return { runId: int8.parse(made.rows[0].id) };
        const running = (await db.query("SELECT id FROM replay_runs WHERE status = 'running' ORDER BY id LIMIT 1")).rows[0];
        if (running !== undefined) return { running: int8.parse(running.id) };
      }
      throw new Error('a replay run could not be claimed: runs kept starting and ending meanwhile');
    },
    async heartbeat(id: number, nodeId: string, now: number, done: number, total: number): Promise<{ cancelRequested: boolean } | null> {
      const r = await db.query(
        "UPDATE replay_runs SET heartbeat_at = $1, progress_done = $2, progress_total = $3 WHERE id = $4 AND status = 'running' AND node_id = $5 RETURNING cancel_requested_at",
        [now, done, total, id, nodeId],
      );
      return r.rows[0] === undefined ? null : { cancelRequested: r.rows[0].cancel_requested_at !== null };
    },
    async requestCancel(id: number, now: number): Promise<boolean> {
      const r = await db.query("UPDATE replay_runs SET cancel_requested_at = coalesce(cancel_requested_at, $1) WHERE id = $2 AND status = 'running' AND node_id IS NOT NULL", [now, id]);
      return (r.rowCount ?? 0) > 0;
    },
    /**
     * One statement (rows and outcome), so a run is listed whole or as running whoever opened the
     * transaction. With `nodeId`, only while the run is still that node's and running: the rows
     * go in only if the outcome did.
     */
    async finishRun(
      id: number,
      status: Exclude<ReplayStatus, 'running'>,
      now: number,
      totals: ReplayTotals | null,
      rows: readonly ReplayRowInput[],
      error: string | null = null,
      nodeId: string | null = null,
    ): Promise<boolean> {
      const r = await db.query(
        `WITH run AS (
           UPDATE replay_runs SET status = $2, finished_at = $3, totals = $4::jsonb, error = $5
           WHERE id = $1 AND ($7::text IS NULL OR (status = 'running' AND node_id = $7))
           RETURNING id),
         added AS (
           INSERT INTO replay_rows (run_id, message_id, conversation_id, client_id, event_type, question, asked_at, before, after, change)
           SELECT run.id, r.message_id, r.conversation_id, r.client_id, r.event_type, r.question, r.asked_at, r.before, r.after, r.change
           FROM run, jsonb_to_recordset($6::jsonb) AS r(message_id bigint, conversation_id text, client_id text, event_type text, question text, asked_at bigint, before jsonb, after jsonb, change text))
         SELECT count(*)::int AS n FROM run`,
        [
          id,
          status,
          now,
          JSON.stringify(totals ?? {}),
          error,
          JSON.stringify(
            rows.map((r) => ({
              message_id: r.messageId,
              conversation_id: r.conversationId,
              client_id: r.clientId,
              event_type: r.eventType,
              question: r.question,
              asked_at: r.askedAt,
              before: r.before,
              after: r.after,
              change: r.change,
            })),
          ),
          nodeId,
        ],
      );
      return (r.rows[0] as { n: number }).n > 0;
    },
    async interruptRunning(now: number): Promise<number> {
      const r = await db.query("UPDATE replay_runs SET status = 'failed', finished_at = $1, error = $2 WHERE status = 'running'", [now, 'interrupted: the process running it stopped']);
      return r.rowCount ?? 0;
    },
    failStale,
    async measuredLatency(engine: string): Promise<number | null> {
      const r = await db.query(
        `SELECT avg(ms) AS ms, count(*) AS n FROM (
           SELECT (side->>'ms')::float8 AS ms FROM replay_rows, LATERAL (VALUES (before), (after)) AS s(side)
           WHERE run_id > (SELECT coalesce(max(id), 0) - 10 FROM replay_runs) AND side->>'engine' = $1 AND side->'llm' = 'true'::jsonb) calls`,
        [engine],
      );
      const row = z.object({ ms: z.number().nullable(), n: int8 }).parse(r.rows[0]);
      return row.n > 0 && row.ms !== null ? row.ms : null;
    },
    async run(id: number): Promise<ReplayRunRow | undefined> {
      const r = (await db.query('SELECT * FROM replay_runs WHERE id = $1', [id])).rows[0];
      return r === undefined ? undefined : toRun(r);
    },
    async runs(limit: number): Promise<ReplayRunRow[]> {
      return (await db.query('SELECT * FROM replay_runs ORDER BY id DESC LIMIT $1', [limit])).rows.map(toRun);
    },
    async rows(runId: number, options: { changedOnly: boolean; limit: number }): Promise<ReplayRowInput[]> {
      const r = await db.query(`SELECT * FROM replay_rows WHERE run_id = $1 ${options.changedOnly ? "AND change != 'same'" : ''} ORDER BY message_id LIMIT $2`, [runId, options.limit]);
      return r.rows.map(toRow);
    },
  };
}
