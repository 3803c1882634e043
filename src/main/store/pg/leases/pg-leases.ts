import { ATTEMPT_TIMEOUT_MS } from '../../../delivery/retry-policy.ts';
import type { Queryable } from './lease.ts';
import { pgDeliveryLeases } from './pg-delivery-leases.ts';
import { pgReplyLeases } from './pg-reply-leases.ts';

export type { Lease, Queryable } from './lease.ts';
export type { ClaimedDelivery, DeliveryAttempt, DeliveryOutcome, Lane } from './pg-delivery-leases.ts';
export type { ClaimedReply, FinishResult } from './pg-reply-leases.ts';

/**
 * The work queue several nodes share on PostgreSQL (issue 30): the outbox's deliveries and the
 * quiet-period reply timers, claimed with SELECT … FOR UPDATE SKIP LOCKED leases. Every time is
 * passed in (the caller's injected clock), and a lease's expiry is compared with that `now`: the
 * nodes' clocks must agree to well within a lease (NTP does; PostgreSQL's own clock is not used,
 * so that tests move time without waiting).
 *
 * The rules:
 * - a claimed row is the holder's until lease.until; the holder renews every `renewEveryMs`, and
 *   a node that dies stops renewing, so its rows become claimable by any node once it passes;
 * - every write a holder makes names its claim (holder and claim number), so a node whose lease
 *   ran out and was claimed again changes nothing: its completion returns false / 'lost';
 * - deliveries: oldest due first, one in flight per conversation across all nodes, the retry
 *   schedule and the lanes as in SQLite (the caller's retry-policy.ts and fair share decide);
 * - reply timers: one per conversation; a newer customer message on any node moves it, and the
 *   answer made for the older one is dropped ('stale').
 * At least once, as on one node: a node that sent a delivery and died before recording it leaves
 * it to be sent again by another (same Idempotency-Key); lease_count > 1 counts those claims.
 */
export function createPgWorkQueue(db: Queryable) {
  return { ...pgDeliveryLeases(db), ...pgReplyLeases(db) };
}

export type PgWorkQueue = ReturnType<typeof createPgWorkQueue>;

/**
 * Defaults for the node that wires this in. A lease outlives the longest single step its holder
 * takes without a chance to renew (an attempt's 15 s request timeout; the engine's 30 s default
 * timeout) with room for a slow commit, and is renewed every third of it, so one late or failed
 * renewal does not lose it. A dead node's work resumes on another within one lease (plus that
 * node's poll): 60 s for deliveries, 90 s for replies (or three engine time-outs, when longer:
 * replyLeaseMsFor).
 */
export const WORK_LEASE_DEFAULTS = {
  deliveryLeaseMs: Math.max(60_000, 4 * ATTEMPT_TIMEOUT_MS),
  replyLeaseMs: 90_000,
  /** Renew each held lease this often: a third of its length. */
  renewFraction: 1 / 3,
  /** Rows claimed per statement; the node's free slots bound it further. */
  claimLimit: 32,
} as const;

/** A reply's lease with the configured engine time-out (server config engineTimeoutMs, 30 s by default). */
export const replyLeaseMsFor = (engineTimeoutMs: number): number => Math.max(WORK_LEASE_DEFAULTS.replyLeaseMs, 3 * engineTimeoutMs);
