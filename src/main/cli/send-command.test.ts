import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMessageInfo, defaultEndpoint, sendCommand, type SendFlags, type SendIo } from './send-command.ts';
import { UsageError } from './args.ts';

const dir = (): string => mkdtempSync(join(tmpdir(), 'sb-send-unit-'));
const build = (flags: SendFlags): Record<string, unknown> => buildMessageInfo(flags, () => 'cli_fixed');

test('flags build a minimal valid message_info; auto_dialog gets from_user_type 2 (a customer)', () => {
  assert.deepEqual(build({ event: 'website_dialog', from: 'v-1', content: 'hi' }), { event_type: 'website_dialog', msg_id: 'cli_fixed', from_user_id: 'v-1', content: 'hi' });
  assert.deepEqual(build({ event: 'auto_dialog', group: 'g-1', from: 'u-1', at: 'bot, ,bot-2', content: 'hi', 'send-url': 'https://h.example.com/in' }), {
    event_type: 'auto_dialog',
    msg_id: 'cli_fixed',
    from_user_id: 'u-1',
    from_user_type: 2,
    group_id: 'g-1',
    at_list: ['bot', 'bot-2'],
    content: 'hi',
    send_url: 'https://h.example.com/in',
  });
  assert.equal(build({ event: 'auto_dialog', from: 'staff', 'from-type': '3', to: 'c-1', content: 'hi', 'msg-id': 'm-9' })['from_user_type'], 3);
});

test('--file is sent as it is, flags override its fields, and a whole request body gives its message_info', () => {
  const d = dir();
  const file = join(d, 'info.json');
  writeFileSync(file, JSON.stringify({ event_type: 'auto_dialog', from_user_id: 'u', content: 'old', quote: { msg_id: 'q', message_type: 1 }, message_type: 2 }));
  assert.deepEqual(build({ file, content: 'new' }), { event_type: 'auto_dialog', from_user_id: 'u', content: 'new', quote: { msg_id: 'q', message_type: 1 }, message_type: 2 });
  const body = join(d, 'body.json');
  writeFileSync(body, JSON.stringify({ client: 'acme', timestamp: 1, signature: 'x', message_info: { event_type: 'cmd_dialog', msg_id: 'm', from_user_id: 'u', content: 'stop_auto_reply' } }));
  assert.deepEqual(build({ file: body }), { event_type: 'cmd_dialog', msg_id: 'm', from_user_id: 'u', content: 'stop_auto_reply' });
  writeFileSync(file, '[1]');
  assert.throws(() => build({ file }), /--file .* must hold a JSON object/);
  writeFileSync(file, '{nope');
  assert.throws(() => build({ file }), /--file .*: not valid JSON/);
});

test('the default endpoint is serve\'s configured address, else the protocol default', () => {
  const d = dir();
  assert.equal(defaultEndpoint(join(d, 'absent')), 'http://127.0.0.1:8787/custom-im/chat-messages');
  writeFileSync(join(d, 'config.json'), JSON.stringify({ host: '0.0.0.0', port: 9100 }));
  assert.equal(defaultEndpoint(d), 'http://127.0.0.1:9100/custom-im/chat-messages');
  writeFileSync(join(d, 'config.json'), JSON.stringify({ host: '::1', port: 9101 }));
  assert.equal(defaultEndpoint(d), 'http://[::1]:9101/custom-im/chat-messages');
  writeFileSync(join(d, 'config.json'), JSON.stringify({ port: 0 }));
  assert.throws(() => defaultEndpoint(d), (e: Error) => e instanceof UsageError && /give --endpoint URL/.test(e.message));
  writeFileSync(join(d, 'config.json'), '{');
  assert.throws(() => defaultEndpoint(d), /not valid JSON.*give --endpoint URL/);
});

test('--secret-stdin reads the secret from a pipe, dropping only the final line break', async () => {
  const out: string[] = [];
  const io: SendIo = { env: {}, readStdin: async () => ' s3cret \n', warn: () => assert.fail('no warning'), out: (l) => out.push(l), err: () => {}, nowMs: () => 1763715600_000 };
  const code = await sendCommand(['--client', 'acme', '--secret-stdin', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--msg-id', 'm-1', '--endpoint', 'http://127.0.0.1:1', '--dry-run'], io);
  assert.equal(code, 0);
  assert.match(out.join('\n'), /^signing_string: 1763715600\.acme\.\{"content":"x","event_type":"website_dialog","from_user_id":"v","msg_id":"m-1"\}$/m);
  // HMAC of the secret with its spaces: a secret is used byte for byte.
  const { createHmac } = await import('node:crypto');
  const expected = createHmac('sha256', ' s3cret ').update('1763715600.acme.{"content":"x","event_type":"website_dialog","from_user_id":"v","msg_id":"m-1"}').digest('hex');
  assert.match(out.join('\n'), new RegExp(`^signature: +${expected}$`, 'm'));
});

test('--dry-run of an auto_dialog without --send-url notes on stderr that the server needs a default send_url for it', async () => {
  const dryRun = async (extra: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: SendIo = { env: { S: 's3cret' }, readStdin: async () => '', warn: () => {}, out: (l) => out.push(l), err: (l) => err.push(l), nowMs: () => 1763715600_000 };
    const code = await sendCommand(['--client', 'bare', '--secret-env', 'S', '--from', 'cust-9', '--content', 'hi', '--endpoint', 'http://127.0.0.1:1', '--dry-run', ...extra], io);
    return { code, out: out.join('\n'), err };
  };
  const bare = await dryRun(['--event', 'auto_dialog']);
  assert.equal(bare.code, 0, 'a note, not an error');
  assert.equal(bare.err.length, 1);
  assert.equal(
    bare.err[0],
    'note: this auto_dialog has no send_url: the server refuses it (400 validation_failed) unless client bare has a default send_url (npm run cli -- clients set bare --send-url URL); or add --send-url URL',
  );
  assert.match(bare.out, /^dry run: nothing was sent$/m);
  assert.deepEqual((await dryRun(['--event', 'auto_dialog', '--send-url', 'https://hooks.example.com/in'])).err, []);
  assert.deepEqual((await dryRun(['--event', 'website_dialog'])).err, [], 'only auto_dialog carries a send_url');
});

test('--nickname, --to-nickname and --group-name set the description\'s display names; blank or over 200 characters is refused', () => {
  assert.deepEqual(build({ event: 'auto_dialog', group: 'g-1', from: 'u-1', content: 'hi', nickname: 'Nora', 'to-nickname': '客服', 'group-name': 'Printer support' }), {
    event_type: 'auto_dialog',
    msg_id: 'cli_fixed',
    from_user_id: 'u-1',
    from_user_type: 2,
    group_id: 'g-1',
    from_user_nickname: 'Nora',
    to_user_nickname: '客服',
    group_name: 'Printer support',
    content: 'hi',
  });
  assert.equal(build({ event: 'website_dialog', from: 'v', content: 'x', nickname: 'N'.repeat(200) })['from_user_nickname'], 'N'.repeat(200));
  assert.throws(() => build({ event: 'website_dialog', from: 'v', content: 'x', nickname: 'N'.repeat(201) }), /--nickname must be 1\.\.200 characters and not blank, got 201/);
  assert.throws(() => build({ event: 'website_dialog', from: 'v', content: 'x', 'to-nickname': '' }), /--to-nickname must be 1\.\.200/);
});
