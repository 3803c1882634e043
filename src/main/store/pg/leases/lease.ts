import { z } from 'zod';
import type { QueryResult, QueryResultRow } from 'pg';
import { int8 } from '../pool.ts';

/**
 * Where the work queue's statements go: a pg.Pool (each statement its own transaction) or a
 * pg.Client / pool client inside a transaction the caller opened (finishReply in the transaction
 * that commits the reply, so both stand or fall together).
 */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * One claim of one row. `count` is the row's claim number: a completion names the claim it
 * answers, so a node whose lease ran out and was claimed again (count moved on) cannot overwrite
 * what the new holder does, even when the new holder is the same node claiming afresh.
 */
export interface Lease {
  holder: string;
  count: number;
  /** Epoch ms; from then on another node may claim the row. */
  until: number;
}

// Every id and time here is epoch ms or a row id, well inside 2^53 (the shared schema refuses one beyond).
export { int8 } from '../pool.ts';

/** The lease columns as read back: a claimed row always has all three. */
export const leaseColumns = {
  lease_holder: z.string().min(1),
  lease_until: int8,
  lease_count: z.number().int().positive(),
};

export const leaseOf = (r: { lease_holder: string; lease_until: number; lease_count: number }): Lease => ({
  holder: r.lease_holder,
  count: r.lease_count,
  until: r.lease_until,
});

/** Arguments every claim takes; refused before any SQL when they make no sense. */
export function checkClaim(nodeId: string, now: number, limit: number, leaseMs: number): void {
  if (nodeId.length === 0) throw new Error('a node id is needed to hold a lease');
  if (!Number.isSafeInteger(now) || now < 0) throw new Error(`now must be epoch milliseconds, got ${now}`);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`claim limit must be a positive integer, got ${limit}`);
  if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new Error(`lease must last at least 1 ms, got ${leaseMs}`);
}

/** Column arrays for `unnest`: the leases a node renews in one statement. */
export function leaseArrays(held: ReadonlyArray<{ key: string | number; lease: Lease }>, nodeId: string): { keys: Array<string | number>; counts: number[] } {
  for (const h of held) if (h.lease.holder !== nodeId) throw new Error(`node ${nodeId} cannot renew a lease held by ${h.lease.holder}`);
  return { keys: held.map((h) => h.key), counts: held.map((h) => h.lease.count) };
}
