import { it } from 'node:test';
import assert from 'node:assert/strict';
import { unknownFieldsOverLimit } from './unknown-fields.ts';
import { LIMITS } from '../../shared/protocol/message-schema.ts';

const over = LIMITS.unknownFieldsMaxBytes + 1;

it('measures each unknown field as the UTF-8 bytes of its compact JSON, escapes and all', () => {
  for (const value of ['a'.repeat(over), '字'.repeat(over / 3), '😀'.repeat(over / 4), '"\\\n\u0001'.repeat(over / 4), '\ud800x'.repeat(over / 2), { deep: ['x'.repeat(over)] }]) {
    const expected = Buffer.byteLength(`"k":${JSON.stringify(value)}`, 'utf8');
    assert.equal(unknownFieldsOverLimit({ event_type: 'auto_dialog', k: value })?.bytes, expected);
  }
});

it('known fields, however large, are not measured', () => {
  const info = { event_type: 'auto_dialog', content: 'c'.repeat(over), files_info: [{ content: 'f'.repeat(over), file_type: 'file' }], quote: { msg_id: 'q', message_type: 1 } };
  assert.equal(unknownFieldsOverLimit(info), null);
});
