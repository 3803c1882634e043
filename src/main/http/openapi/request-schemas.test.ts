import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { messageInfoSchema, type EventType } from '../../../shared/protocol/message-schema.ts';
import { checkScenarioRules } from '../../../shared/protocol/scenario-rules.ts';
import { chatRequestSchema, messageInfoVariants } from './request-schemas.ts';
import { REQUEST_EXAMPLES, signedBody } from './examples.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The few JSON Schema keywords the cross-field rules use, evaluated as a validator would. */
function holds(schema: Json, v: unknown): boolean {
  return Object.entries(schema).every(([keyword, s]) => {
    switch (keyword) {
      case 'required':
        return isObject(v) && (s as string[]).every((p) => p in v);
      case 'properties':
        return !isObject(v) || Object.entries(s as Record<string, Json>).every(([p, sub]) => !(p in v) || holds(sub, v[p]));
      case 'minLength':
        return typeof v !== 'string' || [...v].length >= (s as number);
      case 'minItems':
        return !Array.isArray(v) || v.length >= (s as number);
      case 'const':
        return v === s;
      case 'anyOf':
        return (s as Json[]).some((sub) => holds(sub, v));
      case 'not':
        return !holds(s as Json, v);
      default:
        throw new Error(`this test does not know the keyword ${keyword}`);
    }
  });
}

/** What the document says of a message_info: its variant's schema and cross-field rules. */
function documentAccepts(info: Json): boolean {
  const variant = messageInfoVariants[info['event_type'] as EventType] as z.ZodObject | undefined;
  if (!variant?.safeParse(info).success) return false;
  const rules = (variant.meta()?.['allOf'] ?? []) as Json[];
  return rules.every((rule) => holds(rule, info));
}

/** What the server does: its schema, then the scenario rules (for a client with a default send_url). */
function serverAccepts(info: Json): boolean {
  const parsed = messageInfoSchema.safeParse(info);
  return parsed.success && checkScenarioRules(parsed.data, { hasDefaultSendUrl: true }).length === 0;
}

const file = { content: 'https://files.example.com/a.png', file_type: 'image' };
const auto = (o: Json): Json => ({ event_type: 'auto_dialog', from_user_id: 'c-1', from_user_type: 2, content: 'hi', ...o });
const assist = (o: Json): Json => ({ event_type: 'assist_dialog', msg_id: 'm-1', from_user_id: 'c-1', content: 'hi', ...o });
const web = (o: Json): Json => ({ event_type: 'website_dialog', from_user_id: 'v-1', content: 'hi', ...o });
const cmd = (o: Json): Json => ({ event_type: 'cmd_dialog', from_user_id: 'c-1', content: 'stop_auto_reply', ...o });
const without = (info: Json, key: string): Json => Object.fromEntries(Object.entries(info).filter(([k]) => k !== key));

const CASES: Array<[string, Json]> = [
  ...Object.entries(REQUEST_EXAMPLES).map(([name, e]): [string, Json] => [`example ${name}`, e.info]),
  ['auto without from_user_type', without(auto({}), 'from_user_type')],
  ['auto from_user_type as a string', auto({ from_user_type: '2' })],
  ['auto empty content, no files', auto({ content: '' })],
  ['auto no content, no files', without(auto({}), 'content')],
  ['auto text and files', auto({ files_info: [file] })],
  ['auto text and no files', auto({ files_info: [] })],
  ['auto files alone', without(auto({ files_info: [file, file] }), 'content')],
  ['auto empty text and files', auto({ content: '', files_info: [file] })],
  ['auto no sender', auto({ from_user_id: '' })],
  ['auto group alone', auto({ from_user_id: '', group_id: 'g-1' })],
  ['auto empty group, sender', auto({ group_id: '' })],
  ['auto quote missing', auto({ message_type: 2 })],
  ['auto quote given', auto({ message_type: 2, quote: { msg_id: 'm-0', message_type: 1 } })],
  ['auto message_type 1', auto({ message_type: 1 })],
  ['auto at_list', auto({ at_list: ['bot'] })],
  ['auto content too long', auto({ content: 'x'.repeat(20_001) })],
  ['auto content at the limit in emoji', auto({ content: '😀'.repeat(20_000) })],
  ['auto create_timestamp in ms', auto({ create_timestamp: 1_763_715_600_000 })],
  ['auto unknown fields kept', auto({ nickname: 'Ann', extra: { a: 1 } })],
  ['assist without msg_id', without(assist({}), 'msg_id')],
  ['assist send_url', assist({ send_url: 'https://x.example/hook' })],
  ['assist at_list', assist({ at_list: ['bot'] })],
  ['assist files alone', without(assist({ files_info: [file] }), 'content')],
  ['assist no sender', assist({ from_user_id: '' })],
  ['website send_url', web({ send_url: 'https://x.example/hook' })],
  ['website empty', web({ content: '' })],
  ['website text and files', web({ files_info: [file] })],
  ['website quote missing', web({ message_type: 2 })],
  ['cmd padded', cmd({ content: '  stop_auto_reply\n' })],
  ['cmd padded with a no-break space', cmd({ content: '\u00a0stop_auto_reply' })],
  ['cmd unknown', cmd({ content: 'pause_auto_reply' })],
  ['cmd empty', cmd({ content: '   ' })],
  ['cmd missing', without(cmd({}), 'content')],
  ['cmd files instead', without(cmd({ files_info: [file] }), 'content')],
  ['cmd at_list', cmd({ at_list: ['bot'] })],
  ['cmd no sender', cmd({ from_user_id: '' })],
  ['cmd group', cmd({ from_user_id: '', group_id: 'g-1' })],
  ['unknown event_type', { event_type: 'fax_dialog', from_user_id: 'c-1', content: 'hi' }],
];

describe('the document\'s message_info variants', () => {
  it('accept and refuse exactly what the server does', () => {
    const disagreements = CASES.filter(([, info]) => documentAccepts(info) !== serverAccepts(info)).map(
      ([name, info]) => `${name}: document ${documentAccepts(info)}, server ${serverAccepts(info)}`,
    );
    assert.deepEqual(disagreements, []);
    const accepted = CASES.filter(([, info]) => serverAccepts(info)).length;
    assert.ok(accepted > 10 && accepted < CASES.length - 10, 'the cases cover both answers');
  });

  it('the request schema takes the signed examples and refuses a fifth top-level field', () => {
    for (const e of Object.values(REQUEST_EXAMPLES)) chatRequestSchema.parse(signedBody(e.info));
    const body = { ...signedBody(REQUEST_EXAMPLES['auto_dialog_text']!.info), priority: 'high' };
    assert.equal(chatRequestSchema.safeParse(body).success, false);
  });
});
