import { z } from 'zod';
import { DELIVERY_STATES, toDeliveryRow, type AttemptRow, type DeliveryRow } from '../deliveries.ts';
import { int8 } from './pool.ts';

/** A deliveries row as PostgreSQL returns it (SELECT *: the lease columns are read and dropped). */
export const deliveryRowSchema = z.object({
  id: int8,
  kind: z.enum(['auto', 'operator']),
  reply_id: int8,
  reply_msg_id: z.string(),
  conversation_id: z.string(),
  client_id: z.string(),
  send_url: z.string(),
  origin: z.string(),
  message_info: z.string(),
  state: z.enum(DELIVERY_STATES),
  attempts: z.number().int(),
  round_attempts: z.number().int(),
  next_attempt_at: int8,
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: int8,
  updated_at: int8,
});

export const toPgDeliveryRow = (raw: unknown): DeliveryRow => toDeliveryRow(deliveryRowSchema.parse(raw));

const attemptRowSchema = z.object({
  attempt: z.number().int(),
  started_at: int8,
  duration_ms: z.number(),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  outcome: z.enum(['sent', 'retry', 'dead', 'cancelled']),
});

export function toPgAttemptRow(raw: unknown): AttemptRow {
  const r = attemptRowSchema.parse(raw);
  return { attempt: r.attempt, startedAt: r.started_at, durationMs: r.duration_ms, status: r.status, error: r.error, outcome: r.outcome };
}

/** SQLite reads a negative LIMIT as none; PostgreSQL refuses one and reads NULL as none. */
export const pgLimit = (limit: number): number | null => (limit < 0 ? null : limit);
