import { z } from 'zod';
import { COMMANDS, EVENT_TYPES, LIMITS, messageInfoSchema, type EventType } from '../../../shared/protocol/message-schema.ts';

/**
 * The request body as the document shows it: the server's own message_info schema, its fields
 * described, split per event_type so each variant says what it requires and refuses. The
 * variants are views for the document only: the server validates with messageInfoSchema and then
 * checkScenarioRules; request-schemas.test.ts checks that both agree case by case.
 */

const f = messageInfoSchema.shape;

/** What each field means, as the document says it. */
const DOCS = {
  event_type:
    'The scenario: `auto_dialog` (stored; the service decides by itself whether and when to reply, at send_url), ' +
    '`assist_dialog` (a suggestion for a human agent, answered at once), `website_dialog` (a website visitor, answered at once), ' +
    '`cmd_dialog` (a command in `content`).',
  msg_id:
    'Your id of this message, unique per (client, event_type). Resending the same msg_id with the same message_info returns ' +
    'the first response again (`Idempotent-Replayed: true`); different content is 409 `msg_id_conflict`. Absent: the server makes one (prefix `m_`).',
  group_id: "The group chat the message is in. An empty string counts as absent. When set, the conversation is the group's (peer `g:<group_id>`).",
  from_user_id: 'The sender. An empty string counts as absent; from_user_id and group_id must not both be empty (400 `missing_sender`).',
  to_user_id:
    "The addressee. When the sender is staff or AI (from_user_type 3 or 4, or from_user_id is the client's bound account), " +
    'this is the customer whose conversation the message belongs to.',
  group_name:
    `The group's display name (protocol v1.2), at most ${LIMITS.displayNameMaxChars} characters. The console titles the group ` +
    'conversation with it (the group_id stays on hover and copy); the latest value sent wins.',
  from_user_nickname:
    `The sender's display name (protocol v1.2), at most ${LIMITS.displayNameMaxChars} characters. The console names the sender by it ` +
    'everywhere it would show from_user_id, and the engines read it as the speaker ("Nora: …"); the latest value sent for a ' +
    'from_user_id wins, also on that person\'s earlier lines. `nickname`, `nick_name` and `from_user_name` are read as aliases after it.',
  to_user_nickname:
    `The addressee's display name (protocol v1.2), at most ${LIMITS.displayNameMaxChars} characters: the name of to_user_id. ` +
    'When staff or AI write to a customer, it names the customer of the conversation.',
  from_user_type:
    "1: an IM user (a customer, unless from_user_id is the client's bound account), 2: a customer, 3: staff (a human agent), 4: AI. " +
    'Only customer messages trigger auto replies; a staff message pauses auto-reply in its conversation.',
  message_type: '1: a plain message, 2: a reply that quotes another message (`quote` is then required).',
  content: `The text, at most ${LIMITS.contentMaxChars} characters (code points). Required unless files_info is non-empty.`,
  files_info:
    `Attachments, at most ${LIMITS.filesMax}. Each \`content\` is an http(s) URL, a \`data:\` URL or plain base64; decoded, at most ` +
    `${LIMITS.fileDecodedMaxBytes} bytes per file (413 \`file_too_large\`). Other fields of an item are kept as given.`,
  quote: 'The quoted message, required when message_type is 2. Other fields are kept as given.',
  at_list:
    `Mentioned ids (auto_dialog only), at most ${LIMITS.atListMax}. In a group the bot answers when the client's bound account ` +
    'or a bot id is mentioned (group policy `mention`, the default). Those ids are set by the operator (`npm run cli -- clients set ID ' +
    '--bound-account ACCOUNT` or `--bot-ids ID,...`): a client that has neither is never mentioned, and every group message gets `not_mentioned`.',
  send_url:
    `Where the replies to this message are delivered (auto_dialog only): an absolute http/https URL, at most ${LIMITS.sendUrlMax} characters. ` +
    "Optional when the client has a default send_url. Link-local and cloud metadata addresses, and origins outside the client's " +
    'allowlist, are refused (400 `send_url_not_allowed`).',
  create_timestamp:
    'When the message was written, in Unix seconds (a value above 10^11 is refused as milliseconds). An auto_dialog message older ' +
    "than the client's stale limit (default 10 minutes) is stored but never answered (`stale_message`).",
} satisfies Record<keyof typeof f, string>;

const fields = {
  event_type: f.event_type.meta({ description: DOCS.event_type }),
  msg_id: f.msg_id.meta({ description: DOCS.msg_id }),
  group_id: f.group_id.meta({ description: DOCS.group_id }),
  from_user_id: f.from_user_id.meta({ description: DOCS.from_user_id }),
  to_user_id: f.to_user_id.meta({ description: DOCS.to_user_id }),
  // maxLength counts code points in JSON Schema, as the server's refinement does.
  group_name: f.group_name.meta({ maxLength: LIMITS.displayNameMaxChars, description: DOCS.group_name }),
  from_user_nickname: f.from_user_nickname.meta({ maxLength: LIMITS.displayNameMaxChars, description: DOCS.from_user_nickname }),
  to_user_nickname: f.to_user_nickname.meta({ maxLength: LIMITS.displayNameMaxChars, description: DOCS.to_user_nickname }),
  from_user_type: f.from_user_type.meta({ description: DOCS.from_user_type }),
  message_type: f.message_type.meta({ description: DOCS.message_type }),
  // JSON Schema's maxLength counts code points, as the server's refinement does (zod's .max counts UTF-16 units).
  content: f.content.meta({ maxLength: LIMITS.contentMaxChars, description: DOCS.content }),
  files_info: f.files_info.meta({ description: DOCS.files_info }),
  quote: f.quote.meta({ description: DOCS.quote }),
  at_list: f.at_list.meta({ description: DOCS.at_list }),
  send_url: f.send_url.meta({ format: 'uri', description: DOCS.send_url }),
  create_timestamp: f.create_timestamp.meta({ maximum: LIMITS.createTimestampMax, description: DOCS.create_timestamp }),
} satisfies Record<keyof typeof f, z.ZodType>;

/** A JSON Schema fragment: "this property is present and not empty". */
const nonEmpty = (name: string, keyword: 'minLength' | 'minItems'): Record<string, unknown> => ({
  required: [name],
  properties: { [name]: { [keyword]: 1 } },
});

/**
 * Rules across fields, which zod's object schema cannot carry into JSON Schema: written here as
 * the JSON Schema keywords they are, checked against checkScenarioRules in the unit test.
 */
export const CROSS_FIELD_RULES = {
  sender: { anyOf: [nonEmpty('from_user_id', 'minLength'), nonEmpty('group_id', 'minLength')] },
  payload: { anyOf: [nonEmpty('content', 'minLength'), nonEmpty('files_info', 'minItems')] },
  quote: { anyOf: [{ not: { required: ['message_type'], properties: { message_type: { const: 2 } } } }, { required: ['quote'] }] },
  textOrFiles: { not: { required: ['content', 'files_info'], properties: { content: { minLength: 1 }, files_info: { minItems: 1 } } } },
} as const;

const base = messageInfoSchema.extend(fields);
/** send_url and at_list exist only with auto_dialog (400 `field_not_allowed`). */
const notAllowed = {
  send_url: z.never().optional().meta({ description: 'Not allowed with this event_type (400 `field_not_allowed`).' }),
  at_list: z.never().optional().meta({ description: 'Not allowed with this event_type (400 `field_not_allowed`).' }),
};
const commandPattern = new RegExp(`^\\s*(${COMMANDS.join('|')})\\s*$`);

export const messageInfoVariants = {
  auto_dialog: base
    .extend({ event_type: z.literal('auto_dialog'), from_user_type: f.from_user_type.unwrap().meta({ description: `${DOCS.from_user_type} Required for auto_dialog.` }) })
    .meta({
      title: 'auto_dialog message_info',
      description:
        'A chat message to store; the service then decides by itself whether and when to reply, and delivers the reply to send_url ' +
        '(see `webhooks`). from_user_type is required; non-empty content or files_info, not both (400 `mixed_payload`), and all files of ' +
        'one message share one file_type; send_url is required unless the client has a default one.',
      allOf: [CROSS_FIELD_RULES.sender, CROSS_FIELD_RULES.payload, CROSS_FIELD_RULES.textOrFiles, CROSS_FIELD_RULES.quote],
    }),
  assist_dialog: base
    .extend({ event_type: z.literal('assist_dialog'), msg_id: f.msg_id.unwrap().meta({ description: `${DOCS.msg_id} Required for assist_dialog.` }), ...notAllowed })
    .meta({
      title: 'assist_dialog message_info',
      description:
        'Asks for a suggested answer for a human agent, returned at once (never delivered). msg_id is required: equal to the msg_id of an ' +
        'earlier auto_dialog message of this client, the suggestion answers that stored message, with its conversation up to it (this ' +
        'request\'s content and from_user_id are then not used, and nothing is appended); otherwise this message is appended to the im ' +
        'conversation with the same peer, else to a new one, and answered. The same msg_id again returns the first suggestion ' +
        '(409 `msg_id_conflict` if the message_info differs); a new msg_id is a new message.',
      allOf: [CROSS_FIELD_RULES.sender, CROSS_FIELD_RULES.payload, CROSS_FIELD_RULES.quote],
    }),
  website_dialog: base.extend({ event_type: z.literal('website_dialog'), ...notAllowed }).meta({
    title: 'website_dialog message_info',
    description: 'A website visitor\'s message, appended to the web conversation and answered at once in the response.',
    allOf: [CROSS_FIELD_RULES.sender, CROSS_FIELD_RULES.payload, CROSS_FIELD_RULES.quote],
  }),
  cmd_dialog: base
    .extend({
      event_type: z.literal('cmd_dialog'),
      content: z.string().regex(commandPattern).meta({
        description: `The command, trimmed: one of ${COMMANDS.join(', ')} (else 400 \`unknown_command\`). \`stop_auto_reply\` stops auto-reply in the im conversation of the same peer and cancels its undelivered replies.`,
      }),
      ...notAllowed,
    })
    .meta({
      title: 'cmd_dialog message_info',
      description: 'A command about the im conversation of the same peer. Idempotent.',
      allOf: [CROSS_FIELD_RULES.sender, CROSS_FIELD_RULES.quote],
    }),
} satisfies Record<EventType, z.ZodType>;

export const messageInfoUnion = z
  .discriminatedUnion('event_type', EVENT_TYPES.map((t) => messageInfoVariants[t]) as unknown as [z.ZodObject, ...z.ZodObject[]])
  .meta({
    description:
      'The message. Fields not listed are kept with the stored message and otherwise ignored (they are signed, so harmless); ' +
      `together with the unlisted fields of quote and of each files_info item they may hold at most ${LIMITS.unknownFieldsMaxBytes} bytes ` +
      '(UTF-8 bytes of their compact JSON, `"name":value` each), else 400 `validation_failed` naming the largest. ' +
      'Types are strict: a number where a string is required is an error, not coerced. Numbers are IEEE doubles: an integer beyond ' +
      '2^53 is signed and stored rounded (RFC 8785), so send large ids as strings.',
  });

/** The four signed top-level fields (src/main/http/envelope.ts checks them by hand; this is that check as a schema). */
export const chatRequestSchema = z
  .strictObject({
    client: z.string().min(1).max(128).meta({ description: 'Your client id, as registered by the operator.' }),
    signature: z.string().regex(/^[0-9a-f]{64}$/).meta({
      description:
        'Lowercase hex HMAC-SHA256, key = the client secret as UTF-8, data = `timestamp + "." + client + "." + JCS(message_info)` as UTF-8 ' +
        '(JCS: RFC 8785 canonical JSON of message_info as sent).',
    }),
    timestamp: z.int().meta({ description: 'Unix seconds when you signed; within 300 s of server time (401 `timestamp_out_of_range`).' }),
    message_info: messageInfoUnion,
  })
  .meta({ description: 'Exactly these four fields: any other top-level field is refused (400 `unknown_field`), since it would not be signed.' });
