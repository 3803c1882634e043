import type { StatementSync } from 'node:sqlite';
import type { Db } from './db.ts';
import { emptyDurationHistogram, observeDuration, type DurationHistogram } from '../../shared/duration-histogram.ts';

interface Job {
  op: () => unknown;
  /** Single-statement ops need no savepoint: SQLite rolls back a failed statement by itself. */
  atomic: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface WriteQueue {
  /**
   * Runs `op` inside the next group transaction and resolves once that transaction is durably
   * committed. Ops run one after the other, each to its end (an async op's awaits included)
   * before the next starts, so a read-decide-write sequence inside one is atomic. An op that
   * throws (or rejects) is rolled back alone.
   */
  run<T>(op: () => T | Promise<T>): Promise<T>;
  /**
   * Queues a single-statement write whose durability nobody waits for (request log rows).
   * `settled` runs once it is committed or has failed (a failure also goes to the queue's
   * background-error handler), so whoever counts what is still in flight counts it done either way.
   */
  fireAndForget(op: () => void | Promise<void>, settled?: () => void): void;
  /** Commits what is queued now; used at shutdown. */
  drain(): Promise<void>;
  readonly stats: WriteStats;
}

/** What the queue counts; the writer thread posts it to the main thread with every results message. */
export interface WriteStats {
  batches: number;
  jobs: number;
  largestBatch: number;
  /** How long each committed transaction's COMMIT took (the fsync, and checkpoints). */
  commitSeconds: DurationHistogram;
}

export function emptyWriteStats(): WriteStats {
  return { batches: 0, jobs: 0, largestBatch: 0, commitSeconds: emptyDurationHistogram() };
}

export interface WriteQueueOptions {
  /** Work (ms) a transaction may gather before it commits and the rest goes in the next one. */
  budgetMs?: number;
  /** The time source for that budget and for the commit durations in stats; tests inject one. */
  now?: () => number;
  /**
   * Runs in each transaction after its last job, outside every job's savepoint, right before
   * COMMIT (the search index's queue). If it throws, its own writes are rolled back, the error is
   * reported as a background error, and the jobs still commit; if the error ended the transaction
   * (SQLite rolls back on a full disk), every job of the batch fails with it.
   */
  beforeCommit?: () => void;
}

/**
 * A batch built from a backlog took 150–300 ms before its commit (issue 10), and every caller
 * in it waited that long; past this much work the batch commits and the rest goes in the next.
 */
export const BATCH_BUDGET_MS = 4;

/**
 * Group commit: every op queued during one turn of the event loop shares one transaction and
 * therefore one fsync (synchronous=FULL). Under load the turn is as long as the previous commit,
 * so batches grow with the load and durability stops costing throughput.
 */
export function createWriteQueue(db: Db, onBackgroundError: (error: unknown) => void = () => {}, options: WriteQueueOptions = {}): WriteQueue {
  const budgetMs = options.budgetMs ?? BATCH_BUDGET_MS;
  const now = options.now ?? (() => performance.now());
  let pending: Job[] = [];
  let scheduled = false;
  /** A batch is between BEGIN and its end: an async op may be awaiting; the next batch waits. */
  let flushing = false;
  let idle: Promise<void> = Promise.resolve();
  let markIdle: (() => void) | null = null;
  const stats = emptyWriteStats();

  const sql = (text: string): StatementSync => db.prepare(text);
  const begin = sql('BEGIN IMMEDIATE');
  const commit = sql('COMMIT');
  const rollback = sql('ROLLBACK');
  const savepoint = sql('SAVEPOINT job');
  const release = sql('RELEASE job');
  const rollbackJob = sql('ROLLBACK TO job');
  const beforeCommit = options.beforeCommit;
  const finishing = beforeCommit ? { savepoint: sql('SAVEPOINT before_commit'), release: sql('RELEASE before_commit'), rollback: sql('ROLLBACK TO before_commit') } : null;

  function runBeforeCommit(): void {
    if (!beforeCommit || !finishing) return;
    finishing.savepoint.run();
    try {
      beforeCommit();
      // Inside the try: FTS5 writes its index segment here, so a full disk fails the RELEASE.
      finishing.release.run();
    } catch (error) {
      // An I/O error can end the whole transaction: then the batch fails as one, nothing acknowledged.
      if (!db.isTransaction) throw error;
      finishing.rollback.run();
      finishing.release.run();
      onBackgroundError(error);
    }
  }

  async function flush(): Promise<void> {
    scheduled = false;
    if (flushing) return;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    flushing = true;
    try {
      await flushBatch(batch);
    } finally {
      flushing = false;
    }
  }

  async function flushBatch(given: Job[]): Promise<void> {
    let batch = given;
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      begin.run();
    } catch (error) {
      for (const job of batch) job.reject(error);
      settle();
      return;
    }
    const started = now();
    for (const [index, job] of batch.entries()) {
      if (index > 0 && now() - started >= budgetMs) {
        // The rest waits for the next transaction, so those already applied are not held up by it.
        pending = [...batch.slice(index), ...pending];
        batch = batch.slice(0, index);
        break;
      }
      if (job.atomic) {
        try {
          const value = job.op();
          // A plain value is taken as it is: awaiting only a promise costs a sync op no tick.
          outcomes.push({ ok: true, value: value instanceof Promise ? await value : value });
        } catch (error) {
          outcomes.push({ ok: false, value: error });
        }
        continue;
      }
      savepoint.run();
      try {
        const returned = job.op();
        const value = returned instanceof Promise ? await returned : returned;
        release.run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        rollbackJob.run();
        release.run();
        outcomes.push({ ok: false, value: error });
      }
    }
    let commitMs: number;
    try {
      runBeforeCommit();
      // The COMMIT alone: the WAL's fsync, and the checkpoint when the WAL has passed its limit.
      const committing = now();
      commit.run();
      commitMs = now() - committing;
    } catch (error) {
      try {
        rollback.run();
      } catch {
        // The transaction may already be gone; the commit error is what matters.
      }
      for (const job of batch) job.reject(error);
      settle();
      return;
    }
    stats.batches++;
    observeDuration(stats.commitSeconds, commitMs / 1000);
    stats.jobs += batch.length;
    if (batch.length > stats.largestBatch) stats.largestBatch = batch.length;
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
    settle();
  }

  function settle(): void {
    if (pending.length > 0) {
      // After the callers just settled have reacted (microtasks), so their results leave this
      // thread before the next transaction starts.
      queueMicrotask(schedule);
    } else if (markIdle) {
      markIdle();
      markIdle = null;
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    if (!markIdle) idle = new Promise((r) => (markIdle = r));
    setImmediate(() => void flush());
  }

  function enqueue(job: Job): void {
    pending.push(job);
    schedule();
  }

  return {
    run<T>(op: () => T | Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => enqueue({ op, atomic: false, resolve: resolve as (v: unknown) => void, reject }));
    },
    fireAndForget(op, settled = () => {}) {
      enqueue({
        op,
        atomic: true,
        resolve: () => settled(),
        reject: (error) => {
          onBackgroundError(error);
          settled();
        },
      });
    },
    drain() {
      // `flushing`: a batch whose async op awaits something outside has nothing pending, and is not done.
      return scheduled || flushing || pending.length > 0 ? idle : Promise.resolve();
    },
    stats,
  };
}
