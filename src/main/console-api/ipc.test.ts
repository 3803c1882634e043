import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIpcHandler, isTrustedSender } from './ipc.ts';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';

const OWNER_CALLER = (): Caller => ({ role: 'admin', owner: true, account: null, address: null, session: null });

const INDEX = '/opt/Switchboard/resources/app/out/renderer/index.html';
const handlers = { status: async () => ({ endpoint: 'http://127.0.0.1:8787/custom-im/chat-messages', version: '0.1.0' }) } as unknown as ConsoleHandlers;
const POSIX = { windows: false };
const WINDOWS = { windows: true };

test('only the bundled console page may call the API over IPC', () => {
  assert.ok(isTrustedSender(`file://${INDEX}`, INDEX, POSIX));
  assert.ok(isTrustedSender(`file://${INDEX}#http%3A%2F%2F127.0.0.1`, INDEX, POSIX), 'the hash carries no authority');
  assert.ok(isTrustedSender(`file://${INDEX}?view=clients`, INDEX, POSIX), 'nor does the query');
  assert.ok(!isTrustedSender('https://evil.example/', INDEX, POSIX));
  assert.ok(!isTrustedSender('file:///tmp/other.html', INDEX, POSIX));
  assert.ok(!isTrustedSender(`file://${INDEX.replace('index.html', 'Index.html')}`, INDEX, POSIX), 'POSIX paths are case-sensitive');
  assert.ok(!isTrustedSender(`file://${INDEX}.evil.html`, INDEX, POSIX));
  assert.ok(!isTrustedSender(`http://localhost${INDEX}`, INDEX, POSIX));
  assert.ok(!isTrustedSender(undefined, INDEX, POSIX));
  assert.ok(!isTrustedSender('not a url', INDEX, POSIX));
  assert.ok(!isTrustedSender('file:///opt/%E0%A4%A', INDEX, POSIX), 'a malformed escape is refused, not thrown');
});

test('a POSIX path with spaces and non-ASCII matches the URL Chromium reports for it', () => {
  const index = '/home/zoë/My Apps/Switchboard 交换机/resources/app.asar/out/renderer/index.html';
  // Chromium's spelling: spaces and UTF-8 bytes percent-escaped.
  const frame = 'file:///home/zo%C3%AB/My%20Apps/Switchboard%20%E4%BA%A4%E6%8D%A2%E6%9C%BA/resources/app.asar/out/renderer/index.html#/';
  assert.ok(isTrustedSender(frame, index, POSIX));
  assert.ok(!isTrustedSender(frame.replace('zo%C3%AB', 'zoe'), index, POSIX));
});

test('on Windows the real renderer is trusted: C:\\…\\index.html is file:///C:/…/index.html', () => {
  const index = 'C:\\Users\\Zoë Chen\\AppData\\Local\\Programs\\Switchboard 交换机\\resources\\app.asar\\out\\renderer\\index.html';
  const frame = 'file:///C:/Users/Zo%C3%AB%20Chen/AppData/Local/Programs/Switchboard%20%E4%BA%A4%E6%8D%A2%E6%9C%BA/resources/app.asar/out/renderer/index.html';
  assert.ok(isTrustedSender(frame, index, WINDOWS));
  assert.ok(isTrustedSender(`${frame}#token`, index, WINDOWS));
  assert.ok(isTrustedSender(frame.replace('file:///C:', 'file:///c:'), index, WINDOWS), 'drive letters and names are case-insensitive on Windows');
  assert.ok(!isTrustedSender(frame.replace('renderer/index.html', 'renderer/other.html'), index, WINDOWS));
  assert.ok(!isTrustedSender('file:///D:/Users/evil/index.html', index, WINDOWS));
  // A UNC install (a network share) is a file URL with a host.
  const unc = '\\\\fileserver\\apps\\Switchboard\\resources\\app.asar\\out\\renderer\\index.html';
  assert.ok(isTrustedSender('file://fileserver/apps/Switchboard/resources/app.asar/out/renderer/index.html', unc, WINDOWS));
  assert.ok(!isTrustedSender('file://otherserver/apps/Switchboard/resources/app.asar/out/renderer/index.html', unc, WINDOWS));
});

test('IPC calls are dispatched through the same checked contract, errors as data', async () => {
  const ipc = createIpcHandler(handlers, INDEX, OWNER_CALLER, POSIX);
  assert.deepEqual(await ipc(`file://${INDEX}`, 'status', {}), { ok: true, value: { endpoint: 'http://127.0.0.1:8787/custom-im/chat-messages', version: '0.1.0' } });
  assert.equal((await ipc('https://evil.example/', 'status', {})) .ok, false);
  const unknown = await ipc(`file://${INDEX}`, 'eval', {});
  assert.deepEqual(unknown, { ok: false, error: { code: 'unknown_method', message: 'no console method "eval"' } });
  const bad = await ipc(`file://${INDEX}`, 'getTranscript', { conversationId: 7 });
  assert.equal(!bad.ok && bad.error.code, 'invalid_input');
  const windowsIpc = createIpcHandler(handlers, 'C:\\Program Files\\Switchboard\\resources\\app.asar\\out\\renderer\\index.html', OWNER_CALLER, WINDOWS);
  assert.equal((await windowsIpc('file:///C:/Program%20Files/Switchboard/resources/app.asar/out/renderer/index.html', 'status', {})).ok, true);
});
