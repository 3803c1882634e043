import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIpcHandler, isTrustedSender } from './ipc.ts';
import type { ConsoleHandlers } from '../../shared/console-api.ts';

const INDEX = '/opt/Switchboard/resources/app/out/renderer/index.html';
const handlers = { status: async () => ({ endpoint: 'http://127.0.0.1:8787/custom-im/chat-messages', version: '0.1.0' }) } as unknown as ConsoleHandlers;

test('only the bundled console page may call the API over IPC', () => {
  assert.ok(isTrustedSender(`file://${INDEX}`, INDEX));
  assert.ok(isTrustedSender(`file://${INDEX}#http%3A%2F%2F127.0.0.1`, INDEX), 'the hash carries no authority');
  assert.ok(!isTrustedSender('https://evil.example/', INDEX));
  assert.ok(!isTrustedSender('file:///tmp/other.html', INDEX));
  assert.ok(!isTrustedSender(undefined, INDEX));
  assert.ok(!isTrustedSender('not a url', INDEX));
});

test('IPC calls are dispatched through the same checked contract, errors as data', async () => {
  const ipc = createIpcHandler(handlers, INDEX);
  assert.deepEqual(await ipc(`file://${INDEX}`, 'status', {}), { ok: true, value: { endpoint: 'http://127.0.0.1:8787/custom-im/chat-messages', version: '0.1.0' } });
  assert.equal((await ipc('https://evil.example/', 'status', {})) .ok, false);
  const unknown = await ipc(`file://${INDEX}`, 'eval', {});
  assert.deepEqual(unknown, { ok: false, error: { code: 'unknown_method', message: 'no console method "eval"' } });
  const bad = await ipc(`file://${INDEX}`, 'getTranscript', { conversationId: 7 });
  assert.equal(!bad.ok && bad.error.code, 'invalid_input');
});
