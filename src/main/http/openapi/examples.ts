import { createHash } from 'node:crypto';
import { canonicalJson } from '../../auth/canonical-json.ts';
import { hmacKey, sign, signingString } from '../../auth/signature.ts';
import { DEFAULT_FALLBACK_TEXT } from '../../config/server-config.ts';
import type { EventType } from '../../../shared/protocol/message-schema.ts';

/**
 * The document's examples: one story of client `acme`, the same as docs/protocol.md's (a msg_id
 * both use is the same person's message; test/openapi.test.ts checks it), every request signed for real with a
 * published example secret at a fixed time, so an integrator can check its signing code against
 * them and test/openapi.test.ts can send them, as they are, to a server whose clock shows that time.
 */
export const EXAMPLE = {
  client: 'acme',
  /** The README's test-vector secret: never a real one. */
  secret: 'dGVzdC1zZWNyZXQtZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9u',
  timestamp: 1763715600,
  boundAccount: 'bot-acme',
  sendUrl: 'https://hooks.example.com/switchboard',
  /** The knowledge base the answers below come from. */
  kb: [
    { question: 'How do I reset my password?', answer: 'Go to Settings > Security > Reset password. The link we email you works for 30 minutes.' },
    { question: 'Is there a free plan?', answer: 'Yes: the Free plan is free forever for up to 3 users.' },
  ],
  /** A second client, disabled by the operator. */
  disabledClient: 'initech',
} as const;

export type Info = Record<string, unknown>;

export interface SignedBody {
  client: string;
  signature: string;
  timestamp: number;
  message_info: Info;
}

export function signedBody(info: Info, o: { client?: string; secret?: string; timestamp?: number } = {}): SignedBody {
  const client = o.client ?? EXAMPLE.client;
  const timestamp = o.timestamp ?? EXAMPLE.timestamp;
  const signature = sign(hmacKey(o.secret ?? EXAMPLE.secret), signingString(timestamp, client, canonicalJson(info)));
  return { client, signature, timestamp, message_info: info };
}

export function signingStringSha256(body: SignedBody): string {
  return createHash('sha256').update(signingString(body.timestamp, body.client, canonicalJson(body.message_info)), 'utf8').digest('hex');
}

/** A server-made id of the right shape, the same on every run. */
export function exampleId(prefix: 'c_' | 'r_' | 's_' | 'req_', label: string): string {
  return prefix + createHash('sha256').update(label).digest('base64url').slice(0, 16);
}

const T = EXAMPLE.timestamp;
const conv = {
  cust42: exampleId('c_', 'im u:cust-42'),
  group7: exampleId('c_', 'im g:g-7'),
  cust77: exampleId('c_', 'im u:cust-77'),
  visitor9: exampleId('c_', 'web u:visitor-9'),
  visitor12: exampleId('c_', 'web u:visitor-12'),
};

export interface RequestExample {
  summary: string;
  description?: string;
  info: Info;
  /** The 200 answer; request_id is the X-Request-Id the example is sent with. */
  response: Record<string, unknown>;
}

const reqId = (name: string): string => exampleId('req_', name);

/** In order: each response is what the server answers after the examples before it. */
export const REQUEST_EXAMPLES: Record<string, RequestExample & { eventType: EventType }> = {
  auto_dialog_text: {
    eventType: 'auto_dialog',
    summary: 'auto_dialog: a customer writes in a private chat',
    description: 'The README\'s first signing test vector. The reply is scheduled and delivered to send_url after a quiet period.',
    info: { event_type: 'auto_dialog', msg_id: 'm-1001', from_user_id: 'cust-42', from_user_type: 2, content: 'How do I reset my password?', send_url: EXAMPLE.sendUrl },
    response: { request_id: reqId('auto_dialog_text'), event_type: 'auto_dialog', conversation_id: conv.cust42, msg_id: 'm-1001', auto_reply: 'active', reply: { scheduled: true, reason: 'scheduled' } },
  },
  auto_dialog_group: {
    eventType: 'auto_dialog',
    summary: 'auto_dialog: a customer mentions the bot in a group',
    description: 'In a group the bot answers when the client\'s bound account (here `bot-acme`) or a bot id is in at_list.',
    info: {
      event_type: 'auto_dialog', msg_id: 'm-1002', group_id: 'g-7', from_user_id: 'u-1', from_user_type: 2, at_list: ['bot-acme'],
      content: 'How do I get an invoice?', create_timestamp: T - 2, send_url: EXAMPLE.sendUrl,
    },
    response: { request_id: reqId('auto_dialog_group'), event_type: 'auto_dialog', conversation_id: conv.group7, msg_id: 'm-1002', auto_reply: 'active', reply: { scheduled: true, reason: 'scheduled' } },
  },
  auto_dialog_files: {
    eventType: 'auto_dialog',
    summary: 'auto_dialog: the same customer sends a picture',
    description: 'Files alone (no text), all of one file_type. Pending messages of a conversation are answered together.',
    info: {
      event_type: 'auto_dialog', msg_id: 'm-1004', from_user_id: 'cust-42', from_user_type: 2,
      files_info: [{ content: 'https://files.example.com/uploads/receipt-8841.png', file_type: 'image', file_name: 'receipt.png' }], send_url: EXAMPLE.sendUrl,
    },
    response: { request_id: reqId('auto_dialog_files'), event_type: 'auto_dialog', conversation_id: conv.cust42, msg_id: 'm-1004', auto_reply: 'active', reply: { scheduled: true, reason: 'scheduled' } },
  },
  auto_dialog_customer: {
    eventType: 'auto_dialog',
    summary: 'auto_dialog: another customer writes',
    info: {
      event_type: 'auto_dialog', msg_id: 'm-1006', from_user_id: 'cust-77', from_user_type: 2,
      content: 'My order 5521 arrived broken. Can I get a refund?', send_url: EXAMPLE.sendUrl,
    },
    response: { request_id: reqId('auto_dialog_customer'), event_type: 'auto_dialog', conversation_id: conv.cust77, msg_id: 'm-1006', auto_reply: 'active', reply: { scheduled: true, reason: 'scheduled' } },
  },
  auto_dialog_staff: {
    eventType: 'auto_dialog',
    summary: 'auto_dialog: a human agent answers a customer in the IM',
    description:
      'Staff (from_user_type 3) never triggers a reply, and pauses auto-reply in the customer\'s conversation (default 10 minutes): ' +
      'the reply waiting for m-1006 is not sent.',
    info: {
      event_type: 'auto_dialog', msg_id: 'm-1007', from_user_id: 'agent-ana', from_user_type: 3, to_user_id: 'cust-77',
      content: 'Hi, I am looking into your order now.', send_url: EXAMPLE.sendUrl,
    },
    response: { request_id: reqId('auto_dialog_staff'), event_type: 'auto_dialog', conversation_id: conv.cust77, msg_id: 'm-1007', auto_reply: 'paused', reply: { scheduled: false, reason: 'sender_not_customer' } },
  },
  assist_dialog: {
    eventType: 'assist_dialog',
    summary: 'assist_dialog: an agent asks for a suggestion about message m-1001',
    description: 'msg_id equals an earlier auto_dialog message, so the suggestion uses that message\'s conversation up to it.',
    info: { event_type: 'assist_dialog', msg_id: 'm-1001', from_user_id: 'cust-42', content: 'How do I reset my password?' },
    response: {
      request_id: reqId('assist_dialog'), event_type: 'assist_dialog', conversation_id: conv.cust42, msg_id: 'm-1001',
      context: { reused: true, matched_by: 'msg_id', messages: 1 },
      suggestion: { msg_id: exampleId('s_', 'assist'), content: EXAMPLE.kb[0].answer, handoff: false },
    },
  },
  website_dialog: {
    eventType: 'website_dialog',
    summary: 'website_dialog: a visitor asks on the website',
    info: { event_type: 'website_dialog', msg_id: 'w-2001', from_user_id: 'visitor-9', content: 'Is there a free plan?' },
    response: {
      request_id: reqId('website_dialog'), event_type: 'website_dialog', conversation_id: conv.visitor9, msg_id: 'w-2001',
      reply: { msg_id: exampleId('r_', 'website'), content: EXAMPLE.kb[1].answer, handoff: false },
    },
  },
  website_dialog_handoff: {
    eventType: 'website_dialog',
    summary: 'website_dialog: no confident answer, handed off to a human',
    description: 'The visitor gets the fallback text and the conversation is flagged as needing a human in the console.',
    info: { event_type: 'website_dialog', msg_id: 'w-2002', from_user_id: 'visitor-12', content: 'Can I pay by bank transfer from abroad?' },
    response: {
      request_id: reqId('website_dialog_handoff'), event_type: 'website_dialog', conversation_id: conv.visitor12, msg_id: 'w-2002',
      reply: { msg_id: exampleId('r_', 'website handoff'), content: DEFAULT_FALLBACK_TEXT, handoff: true },
    },
  },
  cmd_dialog: {
    eventType: 'cmd_dialog',
    summary: 'cmd_dialog: stop auto-reply for customer cust-42',
    description: 'Stops auto-reply in the im conversation of the same peer and cancels its undelivered replies. Only the console resumes it.',
    info: { event_type: 'cmd_dialog', msg_id: 'cmd-3001', from_user_id: 'cust-42', content: 'stop_auto_reply' },
    response: {
      request_id: reqId('cmd_dialog'), event_type: 'cmd_dialog', conversation_id: conv.cust42, msg_id: 'cmd-3001',
      command: 'stop_auto_reply', auto_reply: 'stopped', previous: 'active', cancelled_replies: 0,
    },
  },
};

/** What send_url receives (docs/protocol.md section 8), signed at the attempt's time. */
export const DELIVERY_EXAMPLES: Record<string, { summary: string; description?: string; timestamp: number; info: Info }> = {
  auto_reply: {
    summary: 'An auto reply answering both pending messages of cust-42',
    timestamp: T + 10,
    info: {
      msg_id: exampleId('r_', 'auto reply'), reply_to: ['m-1001', 'm-1004'], conversation_id: conv.cust42, from_user_id: EXAMPLE.boundAccount,
      to_user_id: 'cust-42', content: EXAMPLE.kb[0].answer, message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: T + 10,
    },
  },
  auto_reply_group: {
    summary: 'An auto reply in a group, mentioning the customer who asked',
    timestamp: T + 4,
    info: {
      msg_id: exampleId('r_', 'auto reply group'), reply_to: ['m-1002'], conversation_id: conv.group7, group_id: 'g-7', from_user_id: EXAMPLE.boundAccount,
      to_user_id: 'u-1', at_list: ['u-1'], content: 'Open Billing > Invoices and choose Download.', message_type: 1, event_type: 'auto_dialog',
      from_user_type: 4, create_timestamp: T + 2,
    },
  },
  operator_reply: {
    summary: 'An operator\'s reply from the console, in an im conversation',
    timestamp: T + 290,
    info: {
      msg_id: exampleId('r_', 'operator reply'), reply_to: ['m-1006'], conversation_id: conv.cust77, from_user_id: EXAMPLE.boundAccount,
      to_user_id: 'cust-77', content: 'I have refunded the order; you will see it within 3 days.', message_type: 1, event_type: 'auto_dialog',
      from_user_type: 3, operator: { id: 'ana', name: 'Ana Silva' }, create_timestamp: T + 290,
    },
  },
  operator_reply_web: {
    summary: 'An operator\'s reply to a website visitor',
    description: 'A web conversation is answered at the client\'s default send_url, with event_type website_dialog.',
    timestamp: T + 300,
    info: {
      msg_id: exampleId('r_', 'operator reply web'), reply_to: ['w-2002'], conversation_id: conv.visitor12, from_user_id: EXAMPLE.boundAccount,
      to_user_id: 'visitor-12', content: 'Yes, by SEPA or SWIFT transfer: I have emailed you our bank details.', message_type: 1,
      event_type: 'website_dialog', from_user_type: 3, operator: { id: 'ana', name: 'Ana Silva' }, create_timestamp: T + 300,
    },
  },
};
