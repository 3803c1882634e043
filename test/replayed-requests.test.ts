import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { eventually } from './helpers/receiver.ts';
import { holdRequest, inFlightGauge, type HeldAnswer } from './helpers/held-request.ts';
import { signBody } from './helpers/sign.ts';

/**
 * Section 3's replay check (409 replayed_request) and docs/protocol.md section 5, end to end
 * against `serve` exactly as an operator starts it: no config.json, no flags beyond the ports and
 * the data folder, so every number here is serve's default.
 */

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function post(endpoint: string, body: string) {
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as Record<string, unknown> };
}

const question = (tag: string, msgId?: string): Record<string, unknown> => ({
  event_type: 'website_dialog',
  ...(msgId ? { msg_id: msgId } : {}),
  from_user_id: `visitor-${tag}`,
  content: `question ${tag}`,
});

function describeAnswer(a: HeldAnswer): string {
  if ('error' in a) return a.error;
  if (a.status === 409) return `409 ${String(a.body['code'])}`;
  return a.headers['idempotent-replayed'] === 'true' ? `${a.status} replayed` : `${a.status}`;
}

describe("replayed requests against serve's defaults (section 3, docs/protocol.md section 5)", () => {
  let dir: string;
  let secret: string;
  let server: ServeProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-replay-'));
    secret = secretFrom(cli(dir, 'clients', 'add', 'acme').stdout);
    server = await spawnServe(dir);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
  });

  it('the same signed request sent twice at once: one is processed, its twin is answered 409 replayed_request (or, with a msg_id, the first answer replayed)', async () => {
    const PAIRS = 10;
    const withoutId = Array.from({ length: PAIRS }, (_, i) => JSON.stringify(signBody('acme', secret, question(`anon-${i}`), nowSeconds())));
    const withId = Array.from({ length: PAIRS }, (_, i) => JSON.stringify(signBody('acme', secret, question(`id-${i}`, `twin-${i}`), nowSeconds())));
    // Every copy on its own connection, held one byte short of its body until the server counts
    // all of them in flight; then the last bytes go out together, so each twin arrives while its
    // first copy is being processed.
    const held = [...withoutId, ...withId].flatMap((body) => [holdRequest(server.endpoint, body), holdRequest(server.endpoint, body)]);
    await eventually(async () => inFlightGauge(await (await fetch(`${server.base}/metrics`)).text()) === held.length + 1, `${held.length} requests in flight`, 10_000);
    for (const h of held) h.finish();
    const answers = await Promise.all(held.map((h) => h.response));
    const pairs = Array.from({ length: 2 * PAIRS }, (_, i) => [answers[2 * i]!, answers[2 * i + 1]!] as const);

    // Without a msg_id a retry cannot be told from a replay: exactly one copy is processed.
    for (const [i, pair] of pairs.slice(0, PAIRS).entries()) {
      assert.deepEqual(pair.map(describeAnswer).sort(), ['200', '409 replayed_request'], `pair ${i} without msg_id`);
    }
    // With a msg_id: one is processed; its twin is 409 while the first is in flight, or the first
    // answer replayed (Idempotent-Replayed) once it was stored; never a second processing.
    let refusedInFlight = 0;
    for (const [i, pair] of pairs.slice(PAIRS).entries()) {
      const kinds = pair.map(describeAnswer);
      const first = pair.find((a) => describeAnswer(a) === '200');
      assert.ok(first && !('error' in first), `pair ${i} with msg_id: one copy processed (${kinds.join(', ')})`);
      const twin = pair.find((a) => a !== first)!;
      if (describeAnswer(twin) === '409 replayed_request') refusedInFlight++;
      else {
        assert.equal(describeAnswer(twin), '200 replayed', `pair ${i} with msg_id: the twin (${kinds.join(', ')})`);
        assert.deepEqual((twin as { body: unknown }).body, first.body, 'the first answer, byte for byte');
      }
    }
    assert.ok(refusedInFlight > 0, 'the twins did arrive while their first copies were in flight');
    console.log(`twins with msg_id: ${refusedInFlight} of ${PAIRS} refused while the first copy was in flight, ${PAIRS - refusedInFlight} answered as replays`);
  });

  it('a replay is refused for 600 s, the default window, and accepted anew after it (window aged on disk, across a restart)', async () => {
    // serve has no clock hook, so the window is aged where serve keeps it: each accepted request's
    // (client, signature) and acceptance time are stored, and a starting server reloads the ones
    // still inside its window. Three requests without msg_id (nothing but the window can then
    // tell a replay), accepted now; two of them are then made 590 s and 610 s old.
    const bodies = ['in', 'out', 'fresh'].map((tag) => JSON.stringify(signBody('acme', secret, question(`window-${tag}`), nowSeconds())));
    const [inside, outside, fresh] = bodies as [string, string, string];
    const first = await Promise.all(bodies.map((b) => post(server.endpoint, b)));
    assert.deepEqual(first.map((r) => r.status), [200, 200, 200]);
    const again = await post(server.endpoint, fresh);
    assert.equal(again.status, 409, 'replayed at once, in the same lifetime');
    assert.equal(again.body['code'], 'replayed_request');

    server.child.kill('SIGTERM');
    assert.equal(await server.exit(), 0);
    const aged = Date.now();
    const db = new DatabaseSync(join(dir, 'switchboard.db'));
    const setAge = db.prepare('UPDATE idempotency SET created_at = ? WHERE client_id = ? AND signature = ?');
    const signatureOf = (body: string): string => (JSON.parse(body) as { signature: string }).signature;
    assert.equal(setAge.run(aged - 590_000, 'acme', signatureOf(inside)).changes, 1);
    assert.equal(setAge.run(aged - 610_000, 'acme', signatureOf(outside)).changes, 1);
    db.close();

    server = await spawnServe(dir);
    const [stillIn, pastIt, stillFresh] = await Promise.all([post(server.endpoint, inside), post(server.endpoint, outside), post(server.endpoint, fresh)]);
    const took = (Date.now() - aged) / 1000;
    assert.ok(took < 10, `restarted and replayed within 10 s of the ageing (${took} s), so the first is still under 600 s old`);
    assert.equal(stillIn.status, 409, `accepted ${590 + took} s ago: still a replay`);
    assert.equal(stillIn.body['code'], 'replayed_request');
    assert.equal(stillFresh.status, 409, 'accepted seconds ago: a replay after the restart too');
    assert.equal(pastIt.status, 200, `accepted ${610 + took} s ago: past the window, accepted anew (${JSON.stringify(pastIt.body)})`);
    assert.equal(pastIt.replayed, null, 'processed as a new request');
    assert.notEqual(pastIt.body['msg_id'], first[1]!.body['msg_id'], 'a new message, with its own server msg_id');
  });
});
