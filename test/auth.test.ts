import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { signBody } from './helpers/sign.ts';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

const text = (extra: Record<string, unknown> = {}) => ({
  event_type: 'auto_dialog',
  msg_id: mid(),
  from_user_id: 'cust-1',
  from_user_type: 2,
  content: 'hello',
  send_url: 'http://127.0.0.1:9/hook',
  ...extra,
});

function assertProblem(res: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body['code'], code);
  assert.equal(res.body['type'], `urn:switchboard:error:${code}`);
  assert.equal(res.body['status'], status);
  assert.equal(typeof res.body['title'], 'string');
  assert.equal(typeof res.body['detail'], 'string');
  assert.equal(res.body['request_id'], res.headers.get('x-request-id'));
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
}

describe('section 3: authentication checks, in order', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ config: { rateLimit: { perSecond: 5, burst: 10 } } });
    h.addClient('acme');
    h.addClient('off');
    h.admin.clients.setEnabled('off', false, h.clock.now());
    h.addClient('busy');
  });
  after(() => h.stop());

  it('row 1: a body that is not JSON is invalid_json', async () => {
    assertProblem(await h.postRaw('{"client": "acme",'), 400, 'invalid_json');
  });

  it('row 1: missing or mistyped top-level fields are validation_failed, every one listed', async () => {
    const res = await h.postRaw(JSON.stringify({ client: 'acme', timestamp: '1700000000', message_info: [] }));
    assertProblem(res, 400, 'validation_failed');
    assert.deepEqual(res.body.errors!.map((e) => e.path).sort(), ['message_info', 'signature', 'timestamp']);
  });

  it('row 1: an extra top-level field is unknown_field (it would not be signed)', async () => {
    const body = { ...signBody('acme', 'x', text(), h.now()), extra: 1 };
    const res = await h.postRaw(JSON.stringify(body));
    assertProblem(res, 400, 'unknown_field');
    assert.deepEqual(res.body.errors, [{ path: 'extra', message: 'is not a field of the protocol (it would not be signed)' }]);
  });

  it('row 2: an unknown client is 401 unknown_client', async () => {
    assertProblem(await h.post(text(), { client: 'nobody', secret: 'whatever' }), 401, 'unknown_client');
  });

  it('row 3: a disabled client is 403 client_disabled, even with a good signature', async () => {
    assertProblem(await h.post(text(), { client: 'off' }), 403, 'client_disabled');
  });

  it('row 4: a timestamp more than 300 s away is 401 timestamp_out_of_range with server_time', async () => {
    for (const skew of [-301, 301]) {
      const res = await h.post(text(), { timestamp: h.now() + skew });
      assertProblem(res, 401, 'timestamp_out_of_range');
      assert.equal(res.body['server_time'], h.now());
    }
    for (const skew of [-300, 300]) assert.equal((await h.post(text(), { timestamp: h.now() + skew })).status, 200);
  });

  it('row 4: a timestamp in milliseconds is called out as milliseconds, like create_timestamp', async () => {
    const ms = await h.post(text(), { timestamp: h.clock.now() });
    assertProblem(ms, 401, 'timestamp_out_of_range');
    assert.match(String(ms.body['detail']), /looks like milliseconds.*divide by 1000/);
    assert.equal(ms.body['server_time'], h.now());
    const seconds = await h.post(text(), { timestamp: h.now() - 301 });
    assert.doesNotMatch(String(seconds.body['detail']), /milliseconds/, 'a plain skew is not called milliseconds');
  });

  it('row 4 comes before row 5: a stale request with a bad signature reports the timestamp', async () => {
    assertProblem(await h.post(text(), { timestamp: h.now() - 1000, secret: 'wrong' }), 401, 'timestamp_out_of_range');
  });

  it('row 5: a wrong secret, a tampered body or a malformed signature is invalid_signature', async () => {
    assertProblem(await h.post(text(), { secret: 'not-the-secret-of-acme-at-all-000000' }), 401, 'invalid_signature');
    const signed = signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', text(), h.now());
    (signed['message_info'] as Record<string, unknown>)['content'] = 'tampered';
    assertProblem(await h.postRaw(JSON.stringify(signed)), 401, 'invalid_signature');
    const upper = signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', text(), h.now());
    upper['signature'] = (upper['signature'] as string).toUpperCase();
    assertProblem(await h.postRaw(JSON.stringify(upper)), 401, 'invalid_signature');
  });

  it('row 5: invalid_signature carries signing_string_sha256, the hash of the signing string the integrator computes', async () => {
    const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
    const info = text({ content: 'clés é ü 中文 😀', create_timestamp: h.now(), extra: { b: 1, a: [1.5, 'x'] } });
    const ts = h.now();
    const wrong = await h.post(info, { secret: 'not-the-secret-of-acme-at-all-000000', timestamp: ts });
    assertProblem(wrong, 401, 'invalid_signature');
    assert.equal(wrong.body['signing_string_sha256'], sha(`${ts}.acme.${canonicalize(info)}`));
    // Sent with other key order and whitespace: the server's string is still the canonical one.
    const signed = signBody('acme', 'wrong-secret', info, ts);
    const reordered = Object.fromEntries(Object.entries(info).reverse());
    const raw = `{ "message_info": ${JSON.stringify(reordered, null, 2)}, "timestamp": ${ts}, "client": "acme", "signature": "${String(signed['signature'])}" }`;
    const res = await h.postRaw(raw);
    assertProblem(res, 401, 'invalid_signature');
    assert.equal(res.body['signing_string_sha256'], sha(`${ts}.acme.${canonicalize(info)}`));
    assert.match(String(res.body['signing_string_sha256']), /^[0-9a-f]{64}$/);
  });

  it('row 5: key order and whitespace of message_info do not matter (JCS)', async () => {
    const info = text({ content: 'ordre des clés: é ü 中文 😀', create_timestamp: h.now() });
    const signed = signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', info, h.now());
    const reordered = Object.fromEntries(Object.entries(info).reverse());
    const raw = `{\n  "message_info" : ${JSON.stringify(reordered, null, 3)},\n "timestamp":${signed['timestamp']}, "client":"acme", "signature":"${signed['signature']}"}`;
    assert.equal((await h.postRaw(raw)).status, 200);
  });

  it('row 5: during a rotation both secrets work; the third rotation retires the oldest', async () => {
    const old = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
    const rotated = 'rotated-acme-secret-0123456789abcdefghijklmnop';
    const box = (await import('../src/main/auth/secret-box.ts')).keyFileBox(`${h.dataDir}/secret.key`);
    h.admin.clients.addSecret('acme', box.seal(rotated), 'mnop', h.clock.now());
    assert.equal((await h.post(text(), { secret: old })).status, 200);
    assert.equal((await h.post(text(), { secret: rotated })).status, 200);
    h.admin.clients.addSecret('acme', box.seal('third-acme-secret-0123456789abcdefghijklmnopq'), 'mnopq', h.clock.now());
    assert.equal((await h.post(text(), { secret: 'third-acme-secret-0123456789abcdefghijklmnopq' })).status, 200, 'a new secret works at once');
    h.clock.advance(1000);
    assertProblem(await h.post(text(), { secret: old }), 401, 'invalid_signature');
    assert.equal((await h.post(text(), { secret: rotated })).status, 200);
    h.admin.clients.retireOlderSecrets('acme', h.clock.now());
    assert.equal((await h.post(text(), { secret: 'third-acme-secret-0123456789abcdefghijklmnopq' })).status, 200);
    // Back to the first secret for the other tests of this suite.
    h.admin.clients.addSecret('acme', box.seal(old), 'wxyz', h.clock.now());
  });

  it('row 6: the same signed request twice is 409 replayed_request when it is not an idempotent retry', async () => {
    const info = { event_type: 'auto_dialog', from_user_id: 'cust-r', from_user_type: 2, content: 'no msg_id here', send_url: 'http://127.0.0.1:9/x' };
    const body = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', info, h.now()));
    const first = await h.postRaw(body);
    assert.equal(first.status, 200);
    assertProblem(await h.postRaw(body), 409, 'replayed_request');
    // After the window the signature is forgotten, but the timestamp is then out of range anyway.
    h.clock.advance(601_000);
    assertProblem(await h.postRaw(body), 401, 'timestamp_out_of_range');
  });

  it('row 6: the same signed request with a msg_id is an idempotent retry, not a replay', async () => {
    const body = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', text(), h.now()));
    const first = await h.postRaw(body);
    const again = await h.postRaw(body);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
  });

  it('row 6: a refused request can be sent again unchanged (it was never accepted)', async () => {
    const body = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', text({ from_user_type: 9 }), h.now()));
    assertProblem(await h.postRaw(body), 400, 'validation_failed');
    assertProblem(await h.postRaw(body), 400, 'validation_failed');
  });

  it('row 7: past the burst a client is 429 rate_limited with Retry-After; others are unaffected', async () => {
    const results = await Promise.all(Array.from({ length: 14 }, () => h.post(text(), { client: 'busy' })));
    const limited = results.filter((r) => r.status === 429);
    assert.equal(results.filter((r) => r.status === 200).length, 10);
    assert.equal(limited.length, 4);
    assertProblem(limited[0]!, 429, 'rate_limited');
    assert.equal(limited[0]!.headers.get('retry-after'), '1');
    assert.equal((await h.post(text())).status, 200);
    h.clock.advance(1000);
    assert.equal((await h.post(text(), { client: 'busy' })).status, 200);
  });

  it('row 8: message_info is validated only after authentication', async () => {
    assertProblem(await h.post({ event_type: 'nope' }, { client: 'nobody' }), 401, 'unknown_client');
    assertProblem(await h.post({ event_type: 'nope' }), 400, 'validation_failed');
  });

  it('CLI changes reach the running server: new clients at once, a disabled client within a second', async () => {
    h.addClient('late');
    assert.equal((await h.post(text(), { client: 'late' })).status, 200);
    h.admin.clients.setEnabled('late', false, h.clock.now());
    h.clock.advance(1000);
    assertProblem(await h.post(text(), { client: 'late' }), 403, 'client_disabled');
  });
});
