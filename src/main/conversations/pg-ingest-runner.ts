import type pg from 'pg';
import { pgIngestStore } from '../store/pg/ingest-queries.ts';
import { pendingSpan } from '../store/pg/reply-queries.ts';
import { pgReplyLeases } from '../store/pg/leases/pg-reply-leases.ts';
import { inPgTransaction } from '../store/pg/transaction.ts';
import { executeIngest, type IngestCommand, type Outcome } from './ingest-commands.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { claimSignature, ReplayedSignature } from '../auth/pg-replay-claims.ts';

/** How often a command runs again after losing a race to another node (unique key, serialization, deadlock). */
export const PG_INGEST_ATTEMPTS = 3;

/**
 * When a conversation's auto reply is due, as reply-scheduler.ts's arm sets its timer: a quiet
 * period after the newest pending customer message, but no later than quietMaxSeconds after the
 * oldest one still pending.
 */
export function replyDueAt(settings: Pick<ClientSettings, 'quietSeconds' | 'quietMaxSeconds'>, firstAt: number, lastAt: number): number {
  // Whole milliseconds: the row keeps bigint times, and a setting may be a fraction of a second.
  return Math.ceil(Math.min(lastAt + settings.quietSeconds * 1000, firstAt + Math.max(settings.quietMaxSeconds * 1000, 0)));
}

/**
 * PostgreSQL's counterpart of the writer thread for the endpoint's commands (issue 30): each
 * command in a transaction of its own on a pooled connection; PostgreSQL's own group commit
 * shares WAL flushes between concurrent ones. A command that lost a race to another node (a twin
 * request stored the same idempotency key first) runs again from the start and then finds the
 * winner's response: the same answer SQLite's single writer gives the second of two twins.
 *
 * A customer message stored with a reply scheduled sets its conversation's reply timer (a
 * due_replies row) in the same transaction: a node that dies after the commit leaves the timer
 * for any node's reply worker (src/main/autoreply/pg-reply-worker.ts). With `replayWindowMs`, the
 * request's signature is claimed first in the same transaction (auth/pg-replay-claims.ts).
 */
export function createPgIngestRunner(pool: pg.Pool, options: { replayWindowMs?: number } = {}) {
  const windowMs = options.replayWindowMs;
  return {
    /** Throws ReplayedSignature (nothing written) when the request's signature was taken within the replay window. */
    run(command: IngestCommand): Promise<Outcome | null> {
      return inPgTransaction(
        pool,
        async (tx) => {
          if (windowMs !== undefined && 'request' in command) {
            const r = command.request;
            if (!(await claimSignature(tx, r.clientId, r.signature, r.now, windowMs))) throw new ReplayedSignature();
          }
          const outcome = await executeIngest(pgIngestStore(tx), command);
          if (command.kind === 'auto_dialog' && outcome?.kind === 'ok' && !outcome.replayed && outcome.replyScheduled) {
            const r = command.request;
            const span = await pendingSpan(tx, outcome.conversationId, r.clientId, outcome.msgId);
            if (span) await pgReplyLeases(tx).scheduleReply(outcome.conversationId, replyDueAt(r.settings, span.firstAt, r.now), span.messageId);
          }
          return outcome;
        },
        { attempts: PG_INGEST_ATTEMPTS },
      );
    },
  };
}

export type PgIngestRunner = ReturnType<typeof createPgIngestRunner>;
