import { z } from 'zod';
import { PRESENCES, type ConsoleEvent } from '../../shared/console-api.ts';

/**
 * A console event as it arrives from another node (PostgreSQL NOTIFY): checked before this node's
 * consoles get it. Its type is ConsoleEvent exactly (checked below at compile time), so a new
 * event kind that is not added here fails the typecheck instead of being dropped in production.
 */

const id = z.string().min(1).max(200);
const operator = z.object({ id, name: z.string().max(200) });
const label = z.object({
  peer: z.string(),
  groupId: z.string().nullable(),
  groupName: z.string().nullable(),
  customerId: z.string().nullable(),
  customerName: z.string().nullable(),
});
const recipients = z.array(id);

export const consoleEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('conversation'), conversationId: id }),
  z.object({ type: z.literal('request'), status: z.number().int(), code: z.string().nullable() }),
  z.object({ type: z.literal('delivery'), conversationId: id, state: z.string() }),
  z.object({ type: z.literal('resync') }),
  z.object({
    type: z.literal('alert'),
    conversationId: id,
    reason: z.enum(['needs_human', 'handoff', 'delivery_failed', 'customer_waiting', 'staff_silent']),
    text: z.string(),
    said: z.string().nullable(),
    saidBy: z.string().optional(),
    who: label.optional(),
    recipients: recipients.optional(),
  }),
  z.object({ type: z.literal('presence'), agentId: id, presence: z.enum(PRESENCES) }),
  z.object({ type: z.literal('activity'), conversationId: id, viewing: z.array(id), typing: z.array(id) }),
  z.object({
    type: z.literal('assigned'),
    conversationId: id,
    assignee: id,
    by: operator.nullable(),
    said: z.string().nullable(),
    who: label.optional(),
    recipients,
  }),
  z.object({ type: z.literal('mention'), conversationId: id, noteId: z.number().int(), by: operator, text: z.string(), who: label.optional(), recipients }),
  z.object({ type: z.literal('proposals'), pending: z.number().int().nonnegative() }),
]);

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// A compile error here: ConsoleEvent changed and this schema did not (or the other way round).
const sameAsConsoleEvent: Same<z.infer<typeof consoleEventSchema>, ConsoleEvent> = true;
void sameAsConsoleEvent;
