import type pg from 'pg';
import { idleWaiters } from '../loop/quiesce.ts';
import { pgIngestStore } from '../store/pg/ingest-queries.ts';
import { pgMessageReads } from '../store/pg/message-reads.ts';
import { pgReplyStore } from '../store/pg/reply-queries.ts';
import type { IngestCommand } from './ingest-commands.ts';
import type { MessageReads } from './message-service.ts';
import { createPgIngestRunner } from './pg-ingest-runner.ts';

/** What the message service reads on a PostgreSQL node, straight from the pool. */
export function pgEndpointReads(pool: pg.Pool): MessageReads {
  const ingest = pgIngestStore(pool);
  const reads = pgMessageReads(pool);
  return {
    ...reads,
    messages: { ...reads.messages, context: pgReplyStore(pool).messages.context },
    conversations: ingest.conversations,
    idempotency: ingest.idempotency,
  };
}

/** The endpoint's commands, a transaction each, counted while in flight (for quiesce and stop). */
export function countedPgRunner(pool: pg.Pool, replayWindowMs: number) {
  const runner = createPgIngestRunner(pool, { replayWindowMs });
  let running = 0;
  const ran = idleWaiters();
  return {
    async submit(command: IngestCommand) {
      running++;
      try {
        return await runner.run(command);
      } finally {
        running--;
        ran.release();
      }
    },
    running: (): number => running,
    /** Resolves when a command in flight ends. */
    ended: (): Promise<void> => ran.wait(),
  };
}
