import { REPLAY_LIMITS } from '../../shared/console-replay.ts';

// The usage text of the commands index.ts loads only when they run (each CLI start would otherwise
// load the PostgreSQL driver and the replay engine to print its help or add a client).

export const STORE_USAGE = `  store copy --to postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE [--batch ROWS]
       (moves this data folder's SQLite store into an empty PostgreSQL database: applies the PostgreSQL
        migrations, copies every table in one transaction, checks row counts and a sample of rows; stop serve first)`;

export const EVAL_USAGE = `  eval replay --since 7d | --from DATE [--to DATE]  [--client ID] [--limit N]
              [--engine NAME] [--threshold X] [--system-prompt S] [--with-proposals]
              [--concurrency N (default ${REPLAY_LIMITS.concurrencyDefault})] [--yes]
       (answers past customer questions offline, now and with the candidate, and reports what changes;
        nothing is sent or written to a conversation; shows an estimate and asks first unless --yes)
  eval runs               (past replays)
  eval show RUN [--all]   (a replay's totals and its changed questions; --all: every question)`;
