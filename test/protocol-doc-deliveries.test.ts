import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import canonicalize from 'canonicalize';
import { startHarness } from './helpers/harness.ts';
import { eventually, startReceiver as startTestReceiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { signBody } from './helpers/sign.ts';
import { block, has, importBlock, shape } from './helpers/protocol-doc.ts';
import { runPython, startPython } from './helpers/python-program.ts';

/**
 * Section 8 of docs/protocol.md: its delivery examples against what the server really sends, and
 * its receivers (Node and Python) against real signed deliveries.
 */
const OLD = 'old-secret-of-acme-0123456789abcdefghijklmnop';
const NEW = 'new-secret-of-acme-0123456789abcdefghijklmnop';
const noPython = has('python3') ? false : 'python3 is not installed';

type Harnessed = Awaited<ReturnType<typeof startHarness>>;

/**
 * A client rotated to NEW sends one auto reply to a receiver that knows only OLD: its first attempt
 * is refused with 503 and retried (a 401 would make it dead). Returns how to read that delivery.
 */
async function firstAttemptRefused(h: Harnessed, msgId: string, info: Record<string, unknown>) {
  const r = await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'cust-rx', from_user_type: 2, ...info });
  assert.deepEqual(r.body['reply'], { scheduled: true, reason: 'scheduled' });
  h.clock.advance(2000); // the quiet period
  const delivery = () => h.admin.deliveries.list(undefined, 1)[0]!;
  const first = await eventually(() => delivery().attempts === 1 && delivery(), 'the first attempt');
  assert.equal(first.lastStatus, 503);
  assert.equal(first.state, 'pending', 'a 503 is retried; a 401 would have made it dead');
  return delivery;
}

describe('docs/protocol.md: the receiver example, against real deliveries', () => {
  type ReceiverExample = {
    startReceiver: (o: { client: string; secrets: string[]; port: number; onReply: (m: Record<string, unknown>) => void }) => Promise<Server>;
  };

  it('answers 503 while it cannot verify (the delivery is retried, not dead), and takes the re-signed retry once it has the secret', async () => {
    const { mod, cleanup } = await importBlock<ReceiverExample>('receiver', block('readme-receiver'));
    // The receiver still knows only the secret from before `clients rotate`.
    const secrets = [OLD];
    const handled: Array<Record<string, unknown>> = [];
    const server = await mod.startReceiver({ client: 'acme', secrets, port: 0, onReply: (m) => handled.push(m) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const h = await startHarness({ clockStart: Date.now(), engine: scriptedEngine().engine });
    try {
      h.addClient('acme', { sendUrl: url }, NEW);
      const delivery = await firstAttemptRefused(h, 'doc-rx-1', { content: 'hello' });
      assert.equal(handled.length, 0);

      secrets.push(NEW); // the receiver is given the new secret
      h.clock.advance(5000); // the first retry, signed anew
      const sent = await eventually(() => delivery().state === 'sent' && delivery(), 'the retry accepted');
      assert.equal(sent.attempts, 2);
      assert.equal(handled.length, 1);
      assert.deepEqual(handled[0]!['reply_to'], ['doc-rx-1']);
      assert.equal(handled[0]!['content'], 'answer to: hello');
    } finally {
      await h.stop();
      server.close();
      cleanup();
    }
  });

  it('answers 503 to a forged or stale delivery, and 200 to a duplicate without handling it twice', async () => {
    const { mod, cleanup } = await importBlock<ReceiverExample>('receiver-2', block('readme-receiver'));
    const handled: Array<Record<string, unknown>> = [];
    const server = await mod.startReceiver({ client: 'acme', secrets: [NEW], port: 0, onReply: (m) => handled.push(m) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const info = { msg_id: 'r_1', reply_to: ['m1'], content: 'hello', event_type: 'auto_dialog', from_user_type: 4, message_type: 1 };
      const now = Math.floor(Date.now() / 1000);
      const post = (body: unknown) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'r_1' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const good = JSON.stringify(signBody('acme', NEW, info, now));
      assert.equal((await post(good.replace('hello', 'hacked'))).status, 503, 'forged');
      assert.equal((await post(signBody('acme', NEW, info, now - 301))).status, 503, 'stale');
      assert.equal((await post(signBody('acme', OLD, info, now))).status, 503, 'an unknown secret');
      assert.equal((await post(signBody('other', NEW, info, now))).status, 503, 'another client');
      assert.equal((await post('not json')).status, 503, 'unreadable');
      assert.equal(handled.length, 0);
      assert.equal((await post(good)).status, 200);
      assert.equal((await post(good)).status, 200);
      assert.equal(handled.length, 1, 'the duplicate was acknowledged but not handled again');
    } finally {
      server.close();
      cleanup();
    }
  });
});

describe('docs/protocol.md: the Python receiver, against real deliveries', () => {
  /** The doc's two blocks in one file, as it says to put them, run the way its last lines show. */
  const program = (): string => `${block('readme-python')}
${block('readme-receiver-python')}
import os, sys
secrets = [os.environ["SECRET"]]
server = start_receiver("acme", secrets, lambda info: print("REPLY " + json.dumps(info, ensure_ascii=False)), port=0)
print("PORT", server.server_address[1])
for line in sys.stdin:
    secrets.append(line.strip())  # the receiver is given another secret
    print("ADDED", len(secrets))
`;

  it('answers 503 while it cannot verify (the delivery is retried, not dead), and takes the re-signed retry once it has the secret', { skip: noPython }, async () => {
    // The receiver still knows only the secret from before `clients rotate`.
    const py = startPython(program(), { SECRET: OLD });
    const h = await startHarness({ clockStart: Date.now(), engine: scriptedEngine().engine });
    try {
      const port = (await py.line(/^PORT (\d+)$/, 'the port'))[1]!;
      h.addClient('acme', { sendUrl: `http://127.0.0.1:${port}/` }, NEW);
      const delivery = await firstAttemptRefused(h, 'doc-pyrx-1', { from_user_nickname: 'Nora', content: 'hello 😀' });
      assert.ok(!py.lines.some((l) => l.startsWith('REPLY ')), 'nothing handled');

      py.write(`${NEW}\n`);
      await py.line(/^ADDED 2$/, 'the new secret');
      h.clock.advance(5000); // the first retry, signed anew
      const sent = await eventually(() => delivery().state === 'sent' && delivery(), 'the retry accepted');
      assert.equal(sent.attempts, 2);
      const reply = JSON.parse((await py.line(/^REPLY (.*)$/, 'the reply handled'))[1]!) as Record<string, unknown>;
      assert.deepEqual(reply['reply_to'], ['doc-pyrx-1']);
      assert.equal(reply['content'], 'answer to: hello 😀');
      assert.equal(py.lines.filter((l) => l.startsWith('REPLY ')).length, 1);
    } finally {
      await h.stop();
      await py.stop();
    }
  });

  it('answers 503 to a forged, stale or unreadable delivery, and 200 to a duplicate without handling it twice', { skip: noPython }, async () => {
    const py = startPython(program(), { SECRET: NEW });
    try {
      const url = `http://127.0.0.1:${(await py.line(/^PORT (\d+)$/, 'the port'))[1]}/`;
      const info = { msg_id: 'r_1', reply_to: ['m1'], content: 'hello', event_type: 'auto_dialog', from_user_type: 4, message_type: 1 };
      const now = Math.floor(Date.now() / 1000);
      const post = async (body: unknown): Promise<number> =>
        (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'r_1' }, body: typeof body === 'string' ? body : JSON.stringify(body) })).status;
      const good = JSON.stringify(signBody('acme', NEW, info, now));
      assert.equal(await post(good.replace('hello', 'hacked')), 503, 'forged');
      assert.equal(await post(signBody('acme', NEW, info, now - 301)), 503, 'stale');
      assert.equal(await post(signBody('acme', OLD, info, now)), 503, 'an unknown secret');
      assert.equal(await post(signBody('other', NEW, info, now)), 503, 'another client');
      assert.equal(await post({ ...signBody('acme', NEW, info, now), signature: 'é'.repeat(64) }), 503, 'a signature that is not hex');
      assert.equal(await post('not json'), 503, 'unreadable');
      assert.equal(await post('{"client":"acme","timestamp":1,"signature":"x","message_info":{"a":NaN}}'), 503, 'NaN, which json.loads takes');
      assert.equal(await post(good), 200);
      assert.equal(await post(good), 200);
      assert.equal(await post(good), 200);
      await py.line(/^REPLY /, 'the reply handled');
      assert.equal(py.lines.filter((l) => l.startsWith('REPLY ')).length, 1, 'the duplicates were acknowledged but not handled again');
      assert.equal(py.child.exitCode, null, 'still serving');
    } finally {
      await py.stop();
    }
  });
});

describe('docs/protocol.md: the delivery examples are what the server sends', () => {
  it('with and without a bound account: the same keys and types as real deliveries (no from_user_id without one); json.dumps gives their JCS', async () => {
    const receiver = await startTestReceiver();
    const h = await startHarness({ engine: scriptedEngine().engine });
    try {
      h.addClient('bound', { sendUrl: receiver.url, boundAccount: 'bot-acme' });
      h.addClient('unbound', { sendUrl: receiver.url });
      for (const client of ['bound', 'unbound']) {
        const r = await h.post({ event_type: 'auto_dialog', msg_id: `m-${client}`, from_user_id: 'cust-42', from_user_type: 2, content: 'How do I reset my password?' }, { client });
        assert.deepEqual(r.body['reply'], { scheduled: true, reason: 'scheduled' }, client);
      }
      h.clock.advance(2000);
      await eventually(() => receiver.received.length === 2, 'both deliveries');
      const real = (client: string) => receiver.received.find((d) => d.body.client === client)!.body;
      assert.equal(real('bound').message_info['from_user_id'], 'bot-acme');
      assert.ok(!('from_user_id' in real('unbound').message_info), 'no bound account: no from_user_id');
      for (const client of ['bound', 'unbound']) {
        assert.deepEqual(shape(JSON.parse(block(`readme-delivery-${client}`))), shape(real(client)), client);
      }
      if (has('python3')) {
        const infos = receiver.received.map((d) => JSON.stringify(d.body.message_info));
        const dumped = runPython('import json, sys\nfor line in sys.stdin.read().splitlines():\n    print(json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False))\n', infos.join('\n'));
        assert.deepEqual(dumped.trim().split('\n'), receiver.received.map((d) => canonicalize(d.body.message_info)), 'section 3: json.dumps is JCS for a delivery');
      }
    } finally {
      await h.stop();
      await receiver.close();
    }
  });
});
