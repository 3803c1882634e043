import { z } from 'zod';
import type { Db } from './db.ts';
import type { Channel } from '../../shared/conversation.ts';
import { replayParamsSchema, replayRowSideSchema, replayTotalsSchema, type ReplayParams, type ReplayRowView, type ReplayRunSummary, type ReplayTotals, type ReplayChange, type ReplayStatus } from '../../shared/console-replay.ts';

/** A customer message the service was asked to answer, as a replay reads it. */
export interface PastQuestion {
  messageId: number;
  conversationId: string;
  clientId: string;
  eventType: 'auto_dialog' | 'website_dialog';
  /** An auto_dialog message an assist_dialog asked a suggestion for. */
  assisted: boolean;
  content: string;
  receivedAt: number;
  channel: Channel;
  isGroup: boolean;
}

/** A question's row as stored: the same shape the console shows. */
export type ReplayRowInput = ReplayRowView;

/**
 * The node a run is running on (PostgreSQL's several nodes): its last heartbeat, the progress it
 * gave then, and when another node asked it to stop. Null for a run started with no owner (SQLite's
 * console and the CLI, which keep their progress in memory; a run of an earlier version).
 */
export interface ReplayRunOwner {
  nodeId: string;
  heartbeatAt: number;
  done: number;
  total: number;
  cancelRequestedAt: number | null;
}

/** A run as stored: the console's summary without the progress, and its owner. */
export type ReplayRunRow = Omit<ReplayRunSummary, 'progress'> & { owner: ReplayRunOwner | null };

/** Claiming a run for a node: the run, or the run already running that refused it. */
export type ReplayClaim = { runId: number } | { running: number };

/**
 * Why a stale run failed, in three parts the stores join around the run's node in SQL: its node
 * stopped giving heartbeats. A run without a node (an earlier version's) says so.
 */
export function staleRunErrorParts(staleMs: number): [head: string, noNode: string, tail: string] {
  return ['interrupted: the node running it stopped (', 'no node recorded', `: no heartbeat for ${Math.round(staleMs / 1000)} s)`];
}

export const staleRunError = (nodeId: string | null, staleMs: number): string => {
  const [head, noNode, tail] = staleRunErrorParts(staleMs);
  return `${head}${nodeId ?? noNode}${tail}`;
};

interface RawRun {
  id: number;
  created_at: number;
  finished_at: number | null;
  status: ReplayStatus;
  started_by: string | null;
  params: string;
  totals: string;
  error: string | null;
  node_id: string | null;
  heartbeat_at: number | null;
  progress_done: number | null;
  progress_total: number | null;
  cancel_requested_at: number | null;
}

const startedByText = (startedBy: { id: string; name: string } | null): string | null => (startedBy ? JSON.stringify({ id: startedBy.id, name: startedBy.name }) : null);

const startedBySchema = z.object({ id: z.string(), name: z.string() }).nullable();

// Rows are re-read through their schemas: a run saved by another version reads as it is or not at all.
const toRun = (r: RawRun): ReplayRunRow => {
  const totals = JSON.parse(r.totals) as unknown;
  return {
    id: r.id,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    status: r.status,
    startedBy: startedBySchema.parse(r.started_by === null ? null : JSON.parse(r.started_by)),
    params: replayParamsSchema.parse(JSON.parse(r.params)),
    totals: totals && typeof totals === 'object' && Object.keys(totals).length > 0 ? replayTotalsSchema.parse(totals) : null,
    error: r.error,
    owner: r.node_id === null ? null : { nodeId: r.node_id, heartbeatAt: r.heartbeat_at ?? r.created_at, done: r.progress_done ?? 0, total: r.progress_total ?? 0, cancelRequestedAt: r.cancel_requested_at },
  };
};

/** Replay runs (migration 32) and the past questions they answer; nothing here touches a conversation. */
export function replayQueries(db: Db) {
  const receivedAtFrom = db.prepare('SELECT received_at FROM messages WHERE id >= ? ORDER BY id LIMIT 1');
  const maxId = db.prepare('SELECT coalesce(max(id), 0) AS id FROM messages');
  // From the first message of the window on, in id (arrival) order, on the primary key's range.
  const questions = db.prepare(
    `SELECT m.id, m.conversation_id, m.client_id, m.event_type, m.content, m.received_at, c.channel, c.group_id,
            EXISTS (SELECT 1 FROM replies r WHERE r.conversation_id = m.conversation_id AND r.after_message_id = m.id AND r.kind = 'suggestion') AS assisted
     FROM messages m JOIN conversations c ON c.id = m.conversation_id
     WHERE m.id >= :first AND m.received_at >= :from AND m.received_at < :to
       AND (:client IS NULL OR m.client_id = :client)
       AND m.role = 'customer' AND m.content IS NOT NULL AND trim(m.content) != ''
       AND (m.event_type = 'website_dialog' OR (m.event_type = 'auto_dialog' AND (m.reply_scheduled = 1 OR assisted)))
     ORDER BY m.id LIMIT :limit`,
  );
  const insertRun = db.prepare('INSERT INTO replay_runs (created_at, status, started_by, params) VALUES (?, ?, ?, ?)');
  const finishRun = db.prepare('UPDATE replay_runs SET status = ?, finished_at = ?, totals = ?, error = ? WHERE id = ?');
  const insertRow = db.prepare(
    `INSERT INTO replay_rows (run_id, message_id, conversation_id, client_id, event_type, question, asked_at, before, after, change)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const runById = db.prepare('SELECT * FROM replay_runs WHERE id = ?');
  const runs = db.prepare('SELECT * FROM replay_runs ORDER BY id DESC LIMIT ?');
  const rowsOf = db.prepare('SELECT * FROM replay_rows WHERE run_id = ? ORDER BY message_id LIMIT ?');
  const changedRowsOf = db.prepare("SELECT * FROM replay_rows WHERE run_id = ? AND change != 'same' ORDER BY message_id LIMIT ?");
  // The latest runs' LLM answers of one engine: what a call of it took, for the next estimate.
  const latency = db.prepare(
    `SELECT avg(ms) AS ms, count(*) AS n FROM (
       SELECT json_extract(before, '$.ms') AS ms FROM replay_rows
       WHERE run_id > (SELECT coalesce(max(id), 0) - 10 FROM replay_runs) AND json_extract(before, '$.engine') = :engine AND json_extract(before, '$.llm') = 1
       UNION ALL
       SELECT json_extract(after, '$.ms') FROM replay_rows
       WHERE run_id > (SELECT coalesce(max(id), 0) - 10 FROM replay_runs) AND json_extract(after, '$.engine') = :engine AND json_extract(after, '$.llm') = 1)`,
  );
  const interrupt = db.prepare("UPDATE replay_runs SET status = 'failed', finished_at = ?, error = ? WHERE status = 'running'");
  // A run's last sign of life: its heartbeat, or its start for a run without one.
  const failStale = db.prepare(
    `UPDATE replay_runs SET status = 'failed', finished_at = :now, error = :head || coalesce(node_id, :noNode) || :tail
     WHERE status = 'running' AND coalesce(heartbeat_at, created_at) < :before`,
  );
  const claim = db.prepare(
    `INSERT INTO replay_runs (created_at, status, started_by, params, node_id, heartbeat_at, progress_done, progress_total) VALUES (?, 'running', ?, ?, ?, ?, 0, ?)
     ON CONFLICT (status) WHERE status = 'running' AND node_id IS NOT NULL DO NOTHING RETURNING id`,
  );
  const runningRun = db.prepare("SELECT id FROM replay_runs WHERE status = 'running' ORDER BY id LIMIT 1");
  const ownedRun = db.prepare("SELECT 1 FROM replay_runs WHERE id = ? AND status = 'running' AND node_id = ?");
  const beat = db.prepare(
    "UPDATE replay_runs SET heartbeat_at = ?, progress_done = ?, progress_total = ? WHERE id = ? AND status = 'running' AND node_id = ? RETURNING cancel_requested_at",
  );
  const askCancel = db.prepare("UPDATE replay_runs SET cancel_requested_at = coalesce(cancel_requested_at, ?) WHERE id = ? AND status = 'running' AND node_id IS NOT NULL");

  function failStaleRuns(now: number, staleMs: number): number {
    const [head, noNode, tail] = staleRunErrorParts(staleMs);
    return Number(failStale.run({ now, head, noNode, tail, before: now - staleMs }).changes);
  }

  /** The lowest message id received at or after `from`: ids follow arrival, so a binary search. */
  function firstIdFrom(from: number): number {
    let lo = 1;
    let hi = (maxId.get() as { id: number }).id + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = receivedAtFrom.get(mid) as { received_at: number } | undefined;
      if (!row || row.received_at >= from) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  const rowOf = (r: Record<string, unknown>): ReplayRowInput => ({
    messageId: r['message_id'] as number,
    conversationId: r['conversation_id'] as string,
    clientId: r['client_id'] as string,
    eventType: r['event_type'] as string,
    question: r['question'] as string,
    askedAt: r['asked_at'] as number,
    before: replayRowSideSchema.parse(JSON.parse(r['before'] as string)),
    after: replayRowSideSchema.parse(JSON.parse(r['after'] as string)),
    change: r['change'] as ReplayChange,
  });

  return {
    /**
     * Customer messages of the window the service was asked to answer, oldest first: website
     * questions, auto_dialog messages whose reply was scheduled, and those an assist asked about.
     * Text only: a message without words (a file alone) asks an engine nothing.
     */
    questions(filter: { from: number; to: number; clientId: string | null; limit: number }): PastQuestion[] {
      const rows = questions.all({ first: firstIdFrom(filter.from), from: filter.from, to: filter.to, client: filter.clientId, limit: filter.limit }) as Array<Record<string, unknown>>;
      return rows.map((r) => ({
        messageId: r['id'] as number,
        conversationId: r['conversation_id'] as string,
        clientId: r['client_id'] as string,
        eventType: r['event_type'] as PastQuestion['eventType'],
        assisted: r['assisted'] === 1,
        content: r['content'] as string,
        receivedAt: r['received_at'] as number,
        channel: r['channel'] as Channel,
        isGroup: r['group_id'] !== null,
      }));
    },
    /** A run with no owner (SQLite's console, the CLI): one process keeps it to one at a time, or not at all. */
    startRun(params: ReplayParams, startedBy: { id: string; name: string } | null, now: number): number {
      return Number(insertRun.run(now, 'running', startedByText(startedBy), JSON.stringify(params)).lastInsertRowid);
    },
    /**
     * A run for `claim.nodeId`, unless another is running: runs whose last heartbeat is older than
     * `claim.staleMs` are failed first (their node stopped), then any run still running refuses
     * it. One immediate transaction; PostgreSQL's nodes rely on the partial unique index instead.
     */
    claimRun(params: ReplayParams, startedBy: { id: string; name: string } | null, now: number, claimOf: { nodeId: string; total: number; staleMs: number }): ReplayClaim {
      db.exec('BEGIN IMMEDIATE');
      try {
        failStaleRuns(now, claimOf.staleMs);
        const running = runningRun.get() as { id: number } | undefined;
        const made = running ? undefined : (claim.get(now, startedByText(startedBy), JSON.stringify(params), claimOf.nodeId, now, claimOf.total) as { id: number });
        db.exec('COMMIT');
        return made ? { runId: made.id } : { running: running!.id };
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
    },
    /**
     * The owner's heartbeat with its progress. Null when the run is no longer this node's running
     * run (it ended, or was failed as stale): the node stops it. Else whether a stop was asked.
     */
    heartbeat(id: number, nodeId: string, now: number, done: number, total: number): { cancelRequested: boolean } | null {
      const r = beat.get(now, done, total, id, nodeId) as { cancel_requested_at: number | null } | undefined;
      return r ? { cancelRequested: r.cancel_requested_at !== null } : null;
    },
    /** Asks a running run's node to stop it (at its next heartbeat); false when none runs it. */
    requestCancel(id: number, now: number): boolean {
      return Number(askCancel.run(now, id).changes) > 0;
    },
    /**
     * The run's outcome and its rows, in one transaction: a run is listed whole or as running.
     * With `nodeId`, only while the run is still that node's and running (else nothing is written, false).
     */
    finishRun(id: number, status: Exclude<ReplayStatus, 'running'>, now: number, totals: ReplayTotals | null, rows: readonly ReplayRowInput[], error: string | null = null, nodeId: string | null = null): boolean {
      db.exec('BEGIN IMMEDIATE');
      try {
        if (nodeId !== null && !ownedRun.get(id, nodeId)) {
          db.exec('COMMIT');
          return false;
        }
        for (const r of rows) {
          insertRow.run(id, r.messageId, r.conversationId, r.clientId, r.eventType, r.question, r.askedAt, JSON.stringify(r.before), JSON.stringify(r.after), r.change);
        }
        const changed = Number(finishRun.run(status, now, JSON.stringify(totals ?? {}), error, id).changes) > 0;
        db.exec('COMMIT');
        return changed;
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
    },
    /** Runs left running by a process that ended (serve stopped, the CLI killed): one process owns the store. */
    interruptRunning(now: number): number {
      return Number(interrupt.run(now, 'interrupted: the process running it stopped').changes);
    },
    /** Runs whose node gave no heartbeat for `staleMs` (for a run without one, since it started): failed, naming the node. */
    failStale: failStaleRuns,
    /** An engine's average LLM call in the last ten runs; null when none of them called it. */
    measuredLatency(engine: string): number | null {
      const r = latency.get({ engine }) as { ms: number | null; n: number };
      return r.n > 0 && r.ms !== null ? r.ms : null;
    },
    run(id: number): ReplayRunRow | undefined {
      const r = runById.get(id) as RawRun | undefined;
      return r && toRun(r);
    },
    runs(limit: number): ReplayRunRow[] {
      return (runs.all(limit) as unknown as RawRun[]).map(toRun);
    },
    rows(runId: number, options: { changedOnly: boolean; limit: number }): ReplayRowInput[] {
      return ((options.changedOnly ? changedRowsOf : rowsOf).all(runId, options.limit) as Array<Record<string, unknown>>).map(rowOf);
    },
  };
}

export type ReplayQueries = ReturnType<typeof replayQueries>;
