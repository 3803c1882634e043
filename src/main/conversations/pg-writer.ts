import type pg from 'pg';
import type { StoreContract } from '../store/contract.ts';
import type { PgQueryable } from '../store/pg/pool.ts';
import { inPgTransaction } from '../store/pg/transaction.ts';
import { emptyWriteStats } from '../store/write-queue.ts';
import { idleWaiters } from '../loop/quiesce.ts';
import type { MessageWriter } from './message-service.ts';
import { executeWrite, type WriteCommand, type WriteResult } from './write-commands.ts';
import { PG_INGEST_ATTEMPTS, replyDueAt } from './pg-ingest-runner.ts';
import { pgReplyLeases } from '../store/pg/leases/pg-reply-leases.ts';
import { lockConversation } from '../store/pg/reply-queries.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';

export interface PgWriter extends MessageWriter {
  /** Commands submitted or sent and not yet committed (or failed). */
  pending(): number;
}

/**
 * The writer thread's counterpart on PostgreSQL for the console's commands (issue 30): each
 * command runs the same code as on SQLite (executeWrite, on the store contract) in a transaction
 * of its own on a pooled connection. A command that lost a race to another node (unique key,
 * serialization, deadlock) runs again from the start, as ingest's do. There is no queue and no
 * group commit: PostgreSQL's own group commit shares WAL flushes between concurrent transactions,
 * and two commands of one conversation are ordered by its row locks, not by submission order.
 */
export interface PgWriterDeps {
  pool: pg.Pool;
  /** The whole store on one connection (the command's transaction). */
  storeOf: (db: PgQueryable) => StoreContract;
  /** A client's settings now (its quiet period, for a timer set again). */
  settingsOf: (clientId: string) => Pick<ClientSettings, 'quietSeconds' | 'quietMaxSeconds'> | undefined;
  log: (line: string) => void;
}

/**
 * An undone stop put customer messages back to pending: on SQLite the scheduler arms a timer per
 * message (onReplyScheduled); here the conversation's one timer row is set in the same
 * transaction, due a quiet period after the messages' own arrival (over already: at once), so a
 * node that dies after the commit leaves it for any node's reply worker.
 */
async function rearmAfterResume(tx: PgQueryable, store: StoreContract, conversationId: string, result: WriteResult, settingsOf: PgWriterDeps['settingsOf']): Promise<void> {
  if (result?.kind !== 'auto_reply_state' || !result.rescheduled) return;
  const settings = settingsOf(result.rescheduled.clientId);
  const pending = await store.messages.pendingReplies(conversationId);
  const first = pending[0];
  const last = pending.at(-1);
  if (!settings || !first || !last) return;
  await pgReplyLeases(tx).scheduleReply(conversationId, replyDueAt(settings, first.receivedAt, last.receivedAt), last.id);
}

export function createPgWriter(deps: PgWriterDeps): PgWriter {
  const { pool, storeOf, log } = deps;
  const stats = emptyWriteStats();
  let running = 0;
  const idle = idleWaiters();
  const submit = async (command: WriteCommand): Promise<WriteResult> => {
    running++;
    try {
      const result = await inPgTransaction(
        pool,
        async (tx) => {
          const store = storeOf(tx);
          // A staff-wait check reads, then flags: on SQLite nothing commits in between. Here the
          // row's lock comes first, so a staff line being stored (its update of the row) is either
          // waited for and read, or waits and then takes the conversation out of Needs you; and a
          // second check of it (the storing node's and a sweeping node's at once) reads the flag.
          if (command.kind === 'staff_wait') await lockConversation(tx, command.conversationId);
          const done = await executeWrite(store, command);
          if (command.kind === 'console_resume') await rearmAfterResume(tx, store, command.conversationId, done, deps.settingsOf);
          return done;
        },
        { attempts: PG_INGEST_ATTEMPTS },
      );
      stats.batches++;
      stats.jobs++;
      stats.largestBatch = Math.max(stats.largestBatch, 1);
      return result;
    } finally {
      running--;
      if (running === 0) idle.release();
    }
  };
  const settled = async (): Promise<void> => {
    while (running > 0) await idle.wait();
  };
  return {
    submit,
    send(command) {
      submit(command).catch((error: unknown) => log(`background write (${command.kind}) failed: ${(error as Error).message}`));
    },
    // Every command runs at once in its own transaction: "all before this call" is "all now running".
    drain: settled,
    // Nothing to close (the pool is the node's): the commands under way end.
    close: settled,
    pending: () => running,
    stats,
  };
}
