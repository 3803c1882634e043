import { z } from 'zod';

export const EVENT_TYPES = ['auto_dialog', 'assist_dialog', 'website_dialog', 'cmd_dialog'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const LIMITS = {
  idMax: 128,
  contentMaxChars: 20_000,
  filesMax: 10,
  fileDecodedMaxBytes: 5 * 1024 * 1024,
  atListMax: 100,
  sendUrlMax: 2048,
  /** from_user_nickname, to_user_nickname, group_name (protocol v1.2), in code points. */
  displayNameMaxChars: 200,
  /** Unix seconds above this are almost certainly milliseconds (year 5138 otherwise). */
  createTimestampMax: 1e11,
  /**
   * Unknown fields (of message_info, of its quote and of each files_info item) together, as UTF-8
   * bytes of their compact JSON text (`"name":value` each). Integrators put ids, tags and small
   * metadata there, a few hundred bytes; 64 KiB leaves them ample room while every stored line
   * stays small enough to read back whole (the text itself is at most 20,000 characters).
   */
  unknownFieldsMaxBytes: 64 * 1024,
} as const;

const id = z.string().min(1, 'must not be empty').max(LIMITS.idMax, `must be at most ${LIMITS.idMax} characters`);
/** group_id and from_user_id: an empty string means "absent". */
const optionalId = z.string().max(LIMITS.idMax, `must be at most ${LIMITS.idMax} characters`);

function countChars(s: string): number {
  // Fast path: UTF-16 length is an upper bound of the code point count.
  if (s.length <= LIMITS.contentMaxChars) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A code point is one or two UTF-16 units: only a length between max and 2 * max needs counting. */
export function atMostCodePoints(s: string, max: number): boolean {
  if (s.length <= max) return true;
  if (s.length > 2 * max) return false;
  let n = 0;
  for (const _ of s) if (++n > max) return false;
  return true;
}

/** A display name of the service description: at most 200 code points, like content counted by character. */
const displayName = z
  .string({ error: 'must be a string' })
  .refine((s) => atMostCodePoints(s, LIMITS.displayNameMaxChars), `must be at most ${LIMITS.displayNameMaxChars} characters`);

export const fileInfoSchema = z.looseObject({
  content: z.string().min(1, 'must not be empty'),
  file_type: z.union([z.string().min(1).max(64), z.number().int()], {
    error: 'must be a non-empty string or an integer',
  }),
  file_name: z.string().max(1024).optional(),
});

export const quoteSchema = z.looseObject({
  msg_id: id,
  message_type: z.union([z.literal(1), z.literal(2)], { error: 'must be 1 or 2' }),
});

export const messageInfoSchema = z.looseObject({
  event_type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }),
  msg_id: id.optional(),
  group_id: optionalId.optional(),
  from_user_id: optionalId.optional(),
  to_user_id: id.optional(),
  group_name: displayName.optional(),
  from_user_nickname: displayName.optional(),
  to_user_nickname: displayName.optional(),
  from_user_type: z
    .number({ error: 'must be an integer 1..4' })
    .int('must be an integer 1..4')
    .min(1, 'must be an integer 1..4')
    .max(4, 'must be an integer 1..4')
    .optional(),
  message_type: z.union([z.literal(1), z.literal(2)], { error: 'must be 1 or 2' }).optional(),
  content: z
    .string()
    .refine((s) => countChars(s) <= LIMITS.contentMaxChars, `must be at most ${LIMITS.contentMaxChars} characters`)
    .optional(),
  files_info: z.array(fileInfoSchema).max(LIMITS.filesMax, `must have at most ${LIMITS.filesMax} items`).optional(),
  quote: quoteSchema.optional(),
  at_list: z.array(id).max(LIMITS.atListMax, `must have at most ${LIMITS.atListMax} ids`).optional(),
  send_url: z.string().max(LIMITS.sendUrlMax, `must be at most ${LIMITS.sendUrlMax} characters`).optional(),
  create_timestamp: z
    .number({ error: 'must be an integer (Unix seconds)' })
    .int('must be an integer (Unix seconds)')
    .nonnegative('must not be negative')
    .refine(
      (n) => n <= LIMITS.createTimestampMax,
      'looks like milliseconds: create_timestamp is Unix seconds (divide by 1000)',
    )
    .optional(),
});

export type MessageInfo = z.infer<typeof messageInfoSchema>;
export type FileInfo = z.infer<typeof fileInfoSchema>;

/** The commands cmd_dialog understands; the error for any other lists these. */
export const COMMANDS = ['stop_auto_reply'] as const;
export type Command = (typeof COMMANDS)[number];
