import { isMainThread, parentPort, threadId } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';
import { serveReads } from './worker-reader.ts';

// A read thread for worker-reader.test.ts, with reads that fail, stop the thread or take long on
// purpose; not imported by the app. Its map is imported by the test too (names and fallback).
const db = new DatabaseSync(':memory:');

export const fixtureReads = {
  echo: <T>(value: T): T => value,
  thread: () => threadId,
  /** Two statements in one read: the same snapshot. */
  sum: (a: number, b: number) => (db.prepare('SELECT ? + ? AS n').get(a, b) as { n: number }).n,
  fail: (message: string): never => {
    throw new Error(message);
  },
  exit: (code: number): never => process.exit(code),
  busy: (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
    return ms;
  },
  notPlain: () => () => 1,
};

if (!isMainThread) serveReads(parentPort!, db, fixtureReads);
