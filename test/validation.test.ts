import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { customerMessage, startHarness, mid, type Harness } from './helpers/harness.ts';

const base = customerMessage;
const paths = (r: { body: { errors?: Array<{ path: string }> } }) => (r.body.errors ?? []).map((e) => e.path);

describe('section 2: message_info schema and scenario rules', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme', { sendUrl: 'https://hooks.example.com/in' });
    h.addClient('strict', { allowedOrigins: ['https://hooks.example.com'] });
    h.addClient('nourl');
  });
  after(() => h.stop());

  it('lists every schema problem with its path, not only the first', async () => {
    const r = await h.post(
      base({ msg_id: 7, from_user_type: '2', content: 5, at_list: 'x', files_info: [{ content: 1 }], quote: { msg_id: '' }, mystery: { kept: true } }),
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation_failed');
    const p = paths(r);
    for (const expected of [
      'message_info.msg_id',
      'message_info.from_user_type',
      'message_info.content',
      'message_info.at_list',
      'message_info.files_info[0].content',
      'message_info.files_info[0].file_type',
      'message_info.quote.msg_id',
      'message_info.quote.message_type',
    ]) {
      assert.ok(p.includes(expected), `${expected} missing from ${p.join(', ')}`);
    }
    assert.ok(!p.some((x) => x.includes('mystery')), 'unknown message_info fields are kept, not refused');
  });

  it('types are strict: numbers are not coerced into strings, nor strings into numbers', async () => {
    assert.deepEqual(paths(await h.post(base({ from_user_id: 12345 }))), ['message_info.from_user_id']);
    assert.deepEqual(paths(await h.post(base({ create_timestamp: '1700000000' }))), ['message_info.create_timestamp']);
    assert.deepEqual(paths(await h.post(base({ event_type: 'AUTO_DIALOG' }))), ['message_info.event_type']);
  });

  it('enforces the limits: 20,000 characters of content, 100 at_list ids, 128-character ids, 10 files', async () => {
    assert.equal((await h.post(base({ content: '字'.repeat(20_000) }))).status, 200);
    assert.deepEqual(paths(await h.post(base({ content: 'x'.repeat(20_001) }))), ['message_info.content']);
    assert.equal((await h.post(base({ group_id: 'g1', at_list: Array.from({ length: 100 }, (_, i) => `u${i}`) }))).status, 200);
    assert.deepEqual(paths(await h.post(base({ group_id: 'g1', at_list: Array.from({ length: 101 }, (_, i) => `u${i}`) }))), ['message_info.at_list']);
    assert.deepEqual(paths(await h.post(base({ to_user_id: 'x'.repeat(129) }))), ['message_info.to_user_id']);
    assert.equal((await h.post(base({ msg_id: 'y'.repeat(128) }))).status, 200);
    const files = Array.from({ length: 11 }, () => ({ content: 'https://cdn.example.com/a.png', file_type: 'image' }));
    assert.deepEqual(paths(await h.post(base({ content: undefined, files_info: files }))), ['message_info.files_info']);
  });

  it('create_timestamp in milliseconds is refused with a message that says so', async () => {
    const r = await h.post(base({ create_timestamp: h.clock.now() }));
    assert.equal(r.body.code, 'validation_failed');
    assert.match(r.body.errors![0]!.message, /milliseconds/);
  });

  it('rule 1: content or files_info is required; an empty files_info counts as absent', async () => {
    const r = await h.post(base({ content: '', files_info: [] }));
    assert.equal(r.body.code, 'validation_failed');
    assert.deepEqual(paths(r), ['message_info.content']);
  });

  it('rule 2: no from_user_id and no group_id is missing_sender; empty strings count as absent', async () => {
    const r = await h.post(base({ from_user_id: '', group_id: '' }));
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'missing_sender');
    assert.equal((await h.post(base({ from_user_id: '', group_id: 'g-1' }))).status, 200);
  });

  it('rule 3: auto_dialog needs from_user_type and one kind of payload', async () => {
    assert.deepEqual(paths(await h.post(base({ from_user_type: undefined }))), ['message_info.from_user_type']);
    const mixed = await h.post(base({ files_info: [{ content: 'https://cdn.example.com/a.png', file_type: 'image' }] }));
    assert.equal(mixed.body.code, 'mixed_payload');
    const twoTypes = await h.post(
      base({ content: undefined, files_info: [{ content: 'https://cdn.example.com/a.png', file_type: 'image' }, { content: 'aGVsbG8=', file_type: 'file' }] }),
    );
    assert.equal(twoTypes.body.code, 'mixed_payload');
    const sameType = await h.post(
      base({ content: undefined, files_info: [{ content: 'https://cdn.example.com/a.png', file_type: 'image' }, { content: 'data:image/png;base64,aGVsbG8=', file_type: 'image', file_name: 'a.png' }] }),
    );
    assert.equal(sameType.status, 200);
    const web = await h.post(base({ event_type: 'website_dialog', from_user_type: undefined, files_info: [{ content: 'aGVsbG8=', file_type: 'file' }] }));
    assert.equal(web.status, 200, 'text and files together are fine outside auto_dialog');
  });

  it('rule 4: assist_dialog needs msg_id', async () => {
    const r = await h.post({ event_type: 'assist_dialog', from_user_id: 'cust-1', content: 'hi' });
    assert.equal(r.body.code, 'validation_failed');
    assert.deepEqual(paths(r), ['message_info.msg_id']);
  });

  it('rule 5: cmd_dialog knows stop_auto_reply only, and says which commands exist', async () => {
    const r = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: 'start_auto_reply' });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'unknown_command');
    assert.match(String(r.body['detail']), /supported: stop_auto_reply/);
    const missing = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1' });
    assert.deepEqual(paths(missing), ['message_info.content']);
    assert.equal((await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: '  stop_auto_reply\n' })).status, 200);
  });

  it('send_url and at_list belong to auto_dialog only: field_not_allowed elsewhere', async () => {
    for (const event_type of ['assist_dialog', 'website_dialog', 'cmd_dialog']) {
      const r = await h.post({ event_type, msg_id: mid(), from_user_id: 'c', content: 'stop_auto_reply', send_url: 'https://hooks.example.com/x', at_list: ['a'] });
      assert.equal(r.body.code, 'field_not_allowed', event_type);
      assert.deepEqual(paths(r).sort(), ['message_info.at_list', 'message_info.send_url']);
    }
  });

  it('send_url: required without a client default, absolute http(s), never link-local or metadata', async () => {
    const none = await h.post(base(), { client: 'nourl' });
    assert.equal(none.body.code, 'validation_failed');
    assert.deepEqual(paths(none), ['message_info.send_url']);
    assert.equal((await h.post(base({ send_url: 'ftp://example.com/x' }), { client: 'nourl' })).body.code, 'validation_failed');
    assert.equal((await h.post(base({ send_url: '/relative' }), { client: 'nourl' })).body.code, 'validation_failed');
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/x', 'http://metadata.google.internal/x', 'http://100.100.100.200/x']) {
      const r = await h.post(base({ send_url: url }), { client: 'nourl' });
      assert.equal(r.body.code, 'send_url_not_allowed', url);
    }
    assert.equal((await h.post(base({ send_url: 'http://127.0.0.1:9999/hook' }), { client: 'nourl' })).status, 200);
  });

  it('send_url outside the client allowlist is send_url_not_allowed', async () => {
    const r = await h.post(base({ send_url: 'https://evil.example.net/x' }), { client: 'strict' });
    assert.equal(r.body.code, 'send_url_not_allowed');
    assert.equal((await h.post(base({ send_url: 'https://hooks.example.com/in/1' }), { client: 'strict' })).status, 200);
  });

  it('files: URL, data: URL or base64; decoded size above 5 MiB is 413 file_too_large', async () => {
    const bad = await h.post(base({ content: undefined, files_info: [{ content: 'not base64 !!', file_type: 'file' }] }));
    assert.equal(bad.body.code, 'validation_failed');
    const big = Buffer.alloc(5 * 1024 * 1024 + 3).toString('base64');
    const tooLarge = await h.post(base({ content: undefined, files_info: [{ content: big, file_type: 'file' }] }));
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.code, 'file_too_large');
    const exact = Buffer.alloc(5 * 1024 * 1024).toString('base64');
    assert.equal((await h.post(base({ content: undefined, files_info: [{ content: `data:application/pdf;base64,${exact}`, file_type: 'file' }] }))).status, 200);
  });

  it('a scenario rule\'s detail reads as one sentence: the path, then what is wrong with it', async () => {
    const file = (content: string, file_type: string | number = 'file') => ({ content, file_type });
    const cases: Array<[Record<string, unknown>, string | undefined, string, string]> = [
      [base({ from_user_id: '' }), undefined, 'missing_sender', 'message_info.from_user_id is required when group_id is empty or absent: one of them must identify the sender'],
      [base({ files_info: [file('aGVsbG8=')] }), undefined, 'mixed_payload', 'message_info.files_info must not come with content in auto_dialog: send text alone or files alone, as separate messages'],
      [
        base({ content: undefined, files_info: [file('aGVsbG8=', 'image'), file('aGVsbG8=', 7)] }),
        undefined,
        'mixed_payload',
        'message_info.files_info must all have one file_type in auto_dialog, got image, 7: send each type as a message of its own',
      ],
      [{ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'c', content: 'pause_auto_reply' }, undefined, 'unknown_command', 'message_info.content holds the unknown command "pause_auto_reply"; supported: stop_auto_reply'],
      [base({ content: '' }), undefined, 'validation_failed', 'message_info.content is required when files_info is empty or absent: send text or files'],
      [base({ send_url: 'http://169.254.169.254/x' }), undefined, 'send_url_not_allowed', 'message_info.send_url must not point at a link-local or cloud metadata address'],
      [
        base({ send_url: 'https://evil.example.net/x' }),
        'strict',
        'send_url_not_allowed',
        "message_info.send_url must have one of the client's allowed origins (https://hooks.example.com), not https://evil.example.net",
      ],
      [base({ content: undefined, files_info: [file('data:text/plain')] }), undefined, 'validation_failed', 'message_info.files_info[0].content is a data: URL without a comma before its data'],
      [base({ content: undefined, files_info: [file('data:;base64,!!')] }), undefined, 'validation_failed', 'message_info.files_info[0].content is a data: URL marked base64 whose data is not base64'],
      [
        base({ content: undefined, files_info: [file(Buffer.alloc(5 * 1024 * 1024 + 3).toString('base64'))] }),
        undefined,
        'file_too_large',
        `message_info.files_info[0].content is ${5 * 1024 * 1024 + 3} bytes once decoded; the limit is ${5 * 1024 * 1024}`,
      ],
    ];
    for (const [info, client, code, detail] of cases) {
      const r = await h.post(info, client ? { client } : {});
      assert.equal(r.body.code, code, detail);
      assert.equal(r.body['detail'], detail);
      const [error] = r.body.errors!;
      assert.equal(`${error!.path} ${error!.message}`, detail, 'errors[] holds the same words, path and predicate apart');
    }
  });

  it('message_type 2 needs a quote with msg_id and message_type; other quote fields are kept', async () => {
    assert.deepEqual(paths(await h.post(base({ message_type: 2 }))), ['message_info.quote']);
    const ok = await h.post(base({ message_type: 2, quote: { msg_id: 'q1', message_type: 1, content: 'quoted', sender: 'x' } }));
    assert.equal(ok.status, 200);
  });

  it('unknown message_info fields are stored with the message', async () => {
    const msgId = mid();
    await h.post(base({ msg_id: msgId, nickname: 'Ann', extra: { deep: [1, 2] } }));
    const row = h.admin.messages.findAutoMessage('acme', msgId);
    assert.ok(row);
    const stored = h.admin.messages.messageInfo(row.id);
    assert.equal(stored?.['nickname'], 'Ann');
    assert.deepEqual(stored?.['extra'], { deep: [1, 2] });
  });
});
