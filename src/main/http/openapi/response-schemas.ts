import { z } from 'zod';
import { COMMANDS, type EventType } from '../../../shared/protocol/message-schema.ts';
import { AUTO_REPLY_STATES, REPLY_REASONS } from '../../../shared/conversation.ts';
import { PROBLEM_CODES, type ProblemCode } from '../../../shared/problem-codes.ts';
import { deliveryInfoSchema } from '../../delivery/outbox.ts';

/**
 * What the server answers and delivers, as zod schemas. The server builds these bodies as plain
 * objects (conversations/write-commands.ts, http/problem.ts); test/openapi.test.ts parses real
 * answers with these strict schemas, so a field added there and not here fails.
 */

const requestId = z.string().meta({
  description:
    'This request\'s id: your `X-Request-Id` if you sent one of 1 to 128 characters of `A-Z a-z 0-9 . _ : @ -`, else a fresh one ' +
    '(prefix `req_`; any other value of the header is silently replaced, not refused). Also in the `X-Request-Id` header and in the console\'s request log.',
});
const common = {
  request_id: requestId,
  conversation_id: z.string().meta({ description: 'The server\'s opaque id of the conversation (prefix `c_`).' }),
  msg_id: z.string().meta({ description: 'Your msg_id, or the one the server made (prefix `m_`).' }),
};
const answer = z.strictObject({
  msg_id: z.string().meta({ description: 'The id of this answer (prefix `r_` for a reply, `s_` for a suggestion).' }),
  content: z.string().meta({ description: 'The answer text; with `handoff`, the client\'s fallback text or the server default.' }),
  handoff: z.boolean().meta({ description: 'True when the engine had no confident answer (or timed out): a human should take over.' }),
});

export const successSchemas = {
  auto_dialog: z
    .strictObject({
      ...common,
      event_type: z.literal('auto_dialog'),
      auto_reply: z.enum(AUTO_REPLY_STATES).meta({ description: 'The conversation\'s auto-reply state after this message.' }),
      reply: z
        .strictObject({ scheduled: z.boolean(), reason: z.enum(REPLY_REASONS) })
        .meta({ description: 'Whether the service will reply to this message, and why (or why not).' }),
    })
    .meta({ title: 'auto_dialog response', description: 'The message is stored durably; a scheduled reply is delivered to send_url later (see `webhooks`).' }),
  assist_dialog: z
    .strictObject({
      ...common,
      event_type: z.literal('assist_dialog'),
      context: z
        .strictObject({
          reused: z.boolean().meta({
            description: 'True when the suggestion used a conversation that already existed (`matched_by` is `msg_id` or `peer`), false when this message opened a new one (`matched_by` null).',
          }),
          matched_by: z.enum(['msg_id', 'peer']).nullable(),
          messages: z.int().nonnegative(),
        })
        .meta({
          description:
            'Which conversation the suggestion used: the one of the auto_dialog message with this msg_id (`msg_id`), else the im ' +
            'conversation with the same peer (`peer`), else a new one (`null`); `messages` is how many messages of context the engine saw.',
        }),
      suggestion: answer.meta({ description: 'The suggested answer for the agent. Stored and shown in the console; never delivered.' }),
    })
    .meta({ title: 'assist_dialog response' }),
  website_dialog: z
    .strictObject({ ...common, event_type: z.literal('website_dialog'), reply: answer.meta({ description: 'The answer for the visitor, also stored in the web conversation.' }) })
    .meta({ title: 'website_dialog response' }),
  cmd_dialog: z
    .strictObject({
      ...common,
      event_type: z.literal('cmd_dialog'),
      command: z.enum(COMMANDS),
      auto_reply: z.literal('stopped'),
      previous: z.enum(['none', ...AUTO_REPLY_STATES]).meta({ description: 'The state before the command; `none` when the conversation did not exist yet.' }),
      cancelled_replies: z.int().nonnegative().meta({
        description:
          'How many automatic replies, made but not yet delivered, this command cancelled. Customer messages still in their quiet period ' +
          '(no reply made yet) are dropped too, but not counted here; an operator\'s replies from the console are not cancelled.',
      }),
    })
    .meta({ title: 'cmd_dialog response', description: 'Only the console resumes a stopped conversation.' }),
} satisfies Record<EventType, z.ZodType>;

export const PROBLEM_CODE_LIST = Object.keys(PROBLEM_CODES) as ProblemCode[];

/** Extension members, each carried by these codes only (and then always). */
export const PROBLEM_EXTENSIONS = {
  errors: ['validation_failed', 'unknown_field', 'field_not_allowed', 'missing_sender', 'mixed_payload', 'unknown_command', 'send_url_not_allowed', 'file_too_large'],
  server_time: ['timestamp_out_of_range'],
  signing_string_sha256: ['invalid_signature'],
  retry_after: ['rate_limited'],
} as const satisfies Record<string, readonly ProblemCode[]>;

export const problemSchema = z
  .looseObject({
    type: z.string().regex(/^urn:switchboard:error:[a-z_]+$/).meta({ description: '`urn:switchboard:error:<code>`.' }),
    title: z.string().meta({ description: 'A short summary of the code; the same for every occurrence of it.' }),
    status: z.int().meta({ description: 'The HTTP status.' }),
    detail: z.string().meta({ description: 'What was wrong with this request, for a human.' }),
    code: z.enum(PROBLEM_CODE_LIST).meta({ description: 'Stable: switch on this.' }),
    request_id: requestId,
    errors: z
      .array(z.strictObject({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Every problem found, not only the first: `path` like `message_info.files_info[0].content`.' }),
    server_time: z.int().optional().meta({ description: 'timestamp_out_of_range: the server\'s clock, Unix seconds.' }),
    signing_string_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional().meta({
      description:
        'invalid_signature: hex SHA-256 of the signing string the server computed. Hash yours and compare: different hashes mean ' +
        'your canonical form, timestamp or client differs; equal hashes mean the secret differs.',
    }),
    retry_after: z.int().optional().meta({ description: 'rate_limited: seconds to wait, as in the `Retry-After` header.' }),
    limit_bytes: z.int().optional().meta({ description: 'payload_too_large: the body limit, in bytes.' }),
  })
  .meta({
    title: 'Problem',
    description: 'An RFC 9457 problem. Every refusal is one, with `Content-Type: application/problem+json`; a 500 never carries a stack trace.',
    allOf: Object.entries(PROBLEM_EXTENSIONS).map(([member, codes]) => ({
      if: { required: ['code'], properties: { code: { enum: codes } } },
      then: { required: [member] },
      else: { not: { required: [member] } },
    })),
  });

const deliveryDocs = {
  msg_id: 'The reply\'s id; also the `Idempotency-Key` header. Deduplicate on it: delivery is at least once.',
  reply_to: 'The customer messages (their msg_id) this reply answers.',
  conversation_id: 'The server\'s conversation id.',
  group_id: 'In a group: the group.',
  from_user_id: 'The client\'s bound account, when it has one: post the reply as that account.',
  to_user_id: 'The customer the reply is for.',
  at_list: 'In a group: the customer answered, to mention.',
  content: 'The reply text.',
  create_timestamp: 'When the reply was made, Unix seconds.',
};
const [autoReplyInfo, operatorReplyInfo] = deliveryInfoSchema.options;
const deliveryFields = {
  msg_id: autoReplyInfo.shape.msg_id.meta({ description: deliveryDocs.msg_id }),
  reply_to: autoReplyInfo.shape.reply_to.meta({ description: deliveryDocs.reply_to }),
  conversation_id: autoReplyInfo.shape.conversation_id.meta({ description: deliveryDocs.conversation_id }),
  group_id: z.string().optional().meta({ description: deliveryDocs.group_id }),
  from_user_id: z.string().optional().meta({ description: deliveryDocs.from_user_id }),
  to_user_id: autoReplyInfo.shape.to_user_id.meta({ description: deliveryDocs.to_user_id }),
  at_list: z.array(z.string()).optional().meta({ description: deliveryDocs.at_list }),
  content: autoReplyInfo.shape.content.meta({ description: deliveryDocs.content }),
  create_timestamp: autoReplyInfo.shape.create_timestamp.meta({ description: deliveryDocs.create_timestamp }),
};

export const deliverySchemas = {
  auto_reply: autoReplyInfo.extend(deliveryFields).meta({ title: 'Auto reply', description: 'The AI\'s reply (from_user_type 4).' }),
  operator_reply: operatorReplyInfo
    .extend({
      ...deliveryFields,
      event_type: operatorReplyInfo.shape.event_type.meta({ description: '`auto_dialog` in an im conversation, `website_dialog` in a web conversation.' }),
      operator: operatorReplyInfo.shape.operator.meta({ description: 'The console user who wrote the reply.' }),
    })
    .meta({
      title: 'Operator reply',
      description: 'A human agent\'s reply written in the console (from_user_type 3). It pauses auto-reply like any staff message.',
    }),
};

export const deliveryBodySchema = z
  .strictObject({
    client: z.string().meta({ description: 'The client the reply belongs to.' }),
    timestamp: z.int().meta({ description: 'Unix seconds of this attempt: each attempt is signed anew.' }),
    signature: z.string().regex(/^[0-9a-f]{64}$/).meta({
      description: 'Signed exactly as your requests, with the client\'s newest secret: verify it with the code you sign with.',
    }),
    message_info: z.union([deliverySchemas.auto_reply, deliverySchemas.operator_reply]),
  })
  .meta({ title: 'Delivery' });
