import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { shownInfoSql } from './info-sql.ts';
import { shownInfoText } from './shown-compute.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';
import type { MessageRole } from '../../shared/conversation.ts';

const db = new DatabaseSync(':memory:');
const viaSql = db.prepare(`SELECT ${shownInfoSql('?1', '?2')} AS shown`);
const sqlShown = (text: string, role: MessageRole): unknown => {
  const r = viaSql.get(text, role) as { shown: string | null };
  return r.shown === null ? null : JSON.parse(r.shown);
};
const jsShown = (text: string, role: MessageRole): unknown => {
  const s = shownInfoText(text, role);
  return s === null ? null : JSON.parse(s);
};

const long = (unit: string, n: number): string => unit.repeat(n);
// A cut that falls inside a surrogate pair would split the emoji in UTF-16; code points keep it whole.
const emojiAtCut = `${'x'.repeat(TRANSCRIPT_TEXT_MAX - 1)}😀😀 tail`;

const cases: Array<[string, unknown, MessageRole]> = [
  ['a plain customer line', { event_type: 'auto_dialog', msg_id: 'm1', from_user_id: 'u1', from_user_type: 2, content: 'hi', create_timestamp: 1700000000 }, 'customer'],
  ['names: the first non-blank field, trimmed and cut', { nickname: '  \u3000 ', nick_name: ` ${long('名', 250)} `, from_user_name: 'later' }, 'customer'],
  ['a name of whitespace only everywhere', { from_user_nickname: '\t\n', nickname: ' ' }, 'staff'],
  ['a quote (message_type 2) with long Chinese text', { message_type: 2, quote: { msg_id: 'q1', message_type: 1, content: long('退款', 12_000) } }, 'customer'],
  ['a quote outside message_type 2 names no quoted id', { message_type: 1, quote: { msg_id: 'q1' } }, 'customer'],
  ['an empty quoted msg_id', { message_type: 2, quote: { msg_id: '' } }, 'customer'],
  ['files: objects, non-objects and long names', { files_info: [{ content: 'https://x/a.png', file_type: 'image', file_name: emojiAtCut }, 'not an object', null, { file_type: 3 }, { file_type: 2.5, content: 7 }] }, 'customer'],
  ['files_info that is not an array', { files_info: { content: 'x' } }, 'customer'],
  ['at_list kept as sent', { at_list: ['bot', 'ann', 7, null] }, 'customer'],
  ['a fractional create_timestamp and a string message_type', { create_timestamp: 1700000000.5, message_type: '2' }, 'customer'],
  ['a long event_type is cut to 32', { event_type: long('e', 40) }, 'customer'],
  ['a console command line', { event_type: 'cmd_dialog', content: 'flag_human', source: 'console', operator: { id: 'ann', name: 'Ann Lee' }, note: emojiAtCut, undo: true }, 'command'],
  ['a command without operator or undo', { event_type: 'cmd_dialog', content: 'stop_auto_reply', undo: false, operator: 'not an object' }, 'command'],
  ['a command that never said undo', { event_type: 'cmd_dialog', content: 'resume_auto_reply' }, 'command'],
  ['a command field on a customer line is ignored', { source: 'console', note: 'x' }, 'customer'],
  ['an empty object', {}, 'ai'],
];

for (const [what, info, role] of cases) {
  test(`shown in JavaScript equals SQLite's: ${what}`, () => {
    const text = JSON.stringify(info);
    assert.deepEqual(jsShown(text, role), sqlShown(text, role));
  });
}

test("shown in JavaScript equals SQLite's for text that is no JSON object: null for no JSON, empty fields for another value", () => {
  for (const text of ['not json', '', '{"a":', '[1,2]', '42', '"a string"', 'null']) {
    assert.deepEqual(jsShown(text, 'customer'), sqlShown(text, 'customer'), text);
  }
});

test("shown in JavaScript equals SQLite's on 500 generated messages", () => {
  let seed = 7;
  // The high bits of the LCG: its low bits repeat with a short period, which would pair the choices below.
  const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), Math.floor((seed / 2 ** 31) * n));
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
  const texts = ['', ' ', 'hello', '你好，我的订单在哪里？', emojiAtCut, long('长', TRANSCRIPT_TEXT_MAX + 3), '  padded  ', 'a\u00a0b'];
  const values = [...texts, 0, 1, 2, -3, 2.5, 1e3, true, false, null, [], {}];
  for (let i = 0; i < 500; i++) {
    const info: Record<string, unknown> = {};
    for (const key of ['event_type', 'from_user_nickname', 'nickname', 'nick_name', 'from_user_name', 'message_type', 'create_timestamp', 'source', 'note', 'undo']) {
      if (rand(3) === 0) info[key] = pick(values);
    }
    if (rand(3) === 0) info['quote'] = { msg_id: pick(values), message_type: pick(values), content: pick(values) };
    if (rand(3) === 0) info['files_info'] = Array.from({ length: rand(12) }, () => (rand(4) === 0 ? pick(values) : { content: pick(values), file_type: pick(values), file_name: pick(values) }));
    if (rand(4) === 0) info['at_list'] = [pick(values), pick(values)];
    if (rand(4) === 0) info['operator'] = rand(2) ? { id: pick(values), name: pick(values) } : pick(values);
    const role = pick(['customer', 'staff', 'ai', 'command'] as const);
    const text = JSON.stringify(info);
    assert.deepEqual(jsShown(text, role), sqlShown(text, role), text.slice(0, 300));
  }
});
