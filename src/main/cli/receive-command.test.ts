import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../auth/canonical-json.ts';
import { hmacKey, sign, signingString } from '../auth/signature.ts';
import { FRESHNESS_SECONDS, inspectDelivery, REFUSE_WITH_503 } from './receive-command.ts';

const SECRET = 'acme-secret-0123456789abcdefghijklmnop';
const NOW = 1763715600;

/** A delivery signed as the outbox signs it (src/main/delivery/outbox.ts). */
function delivery(timestamp: number, secret = SECRET, client = 'acme'): string {
  const info = { msg_id: 'r_1', reply_to: ['m_1'], conversation_id: 'c_1', to_user_id: 'u', content: '你好 "x"', message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: timestamp };
  return JSON.stringify({ client, timestamp, signature: sign(hmacKey(secret), signingString(timestamp, client, canonicalJson(info))), message_info: info });
}

test('a delivery signed with the secret and within the window passes', () => {
  const r = inspectDelivery(delivery(NOW - 3), { client: 'acme', secret: SECRET }, NOW);
  assert.equal(r.ok, true);
  assert.ok(r.lines.includes('signature ok (client acme)'));
  assert.ok(r.lines.includes(`timestamp fresh: 3 s from this machine's clock (window ±${FRESHNESS_SECONDS} s)`));
  assert.equal(FRESHNESS_SECONDS, 300, 'the server\'s request window (section 3)');
});

test('a wrong secret, another client, a stale or future timestamp, or no delivery at all fails', () => {
  const verifier = { client: 'acme', secret: SECRET };
  assert.match(inspectDelivery(delivery(NOW, 'other-secret'), verifier, NOW).lines.join('\n'), /^signature does NOT verify with the secret given for client acme/m);
  assert.match(inspectDelivery(delivery(NOW, SECRET, 'beta'), verifier, NOW).lines.join('\n'), /^signature NOT checked: signed by client "beta", not "acme"$/m);
  const stale = inspectDelivery(delivery(NOW - 301), verifier, NOW);
  assert.equal(stale.ok, false);
  assert.match(stale.lines.join('\n'), /^timestamp NOT fresh: 301 s/m);
  assert.equal(inspectDelivery(delivery(NOW + 301), verifier, NOW).ok, false, 'from the future too');
  assert.equal(inspectDelivery(delivery(NOW + 300), verifier, NOW).ok, true, 'the window is inclusive, as the server\'s');
  assert.deepEqual(inspectDelivery('not json', verifier, NOW), { ok: false, lines: ['not json', 'NOT a delivery: the body is not JSON', REFUSE_WITH_503] });
  assert.match(inspectDelivery('{"client":"acme"}', verifier, NOW).lines.at(-2)!, /expected \{client, timestamp, signature, message_info\}/);
});

test('a delivery that fails verification says what a real receiver answers: 503, since any 4xx is final', () => {
  const verifier = { client: 'acme', secret: SECRET };
  for (const failed of [delivery(NOW, 'other-secret'), delivery(NOW - 301), delivery(NOW, SECRET, 'beta'), '{}']) {
    const { ok, lines } = inspectDelivery(failed, verifier, NOW);
    assert.equal(ok, false);
    assert.equal(lines.at(-1), REFUSE_WITH_503, 'said once, last');
    assert.equal(lines.filter((l) => l === REFUSE_WITH_503).length, 1);
    assert.doesNotMatch(lines.join('\n'), /must refuse/);
  }
  assert.match(REFUSE_WITH_503, /should answer 503 .*not a 4xx: any 4xx is final, so the reply would be lost.*docs\/protocol\.md section 8/);
  assert.ok(!inspectDelivery(delivery(NOW), verifier, NOW).lines.includes(REFUSE_WITH_503), 'not for a good one');
});

test('without --client/--secret only freshness is checked, and it says so', () => {
  const r = inspectDelivery(delivery(NOW), undefined, NOW);
  assert.equal(r.ok, true);
  assert.ok(r.lines.includes('signature not checked: give --client and --secret to verify it'));
});
