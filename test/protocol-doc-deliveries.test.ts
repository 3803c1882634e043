import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness } from './helpers/harness.ts';
import { eventually } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { signBody } from './helpers/sign.ts';
import { block, importBlock } from './helpers/protocol-doc.ts';

/** Section 8 of docs/protocol.md: its receiver against real signed deliveries. */
const OLD = 'old-secret-of-acme-0123456789abcdefghijklmnop';
const NEW = 'new-secret-of-acme-0123456789abcdefghijklmnop';

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
      const r = await h.post({ event_type: 'auto_dialog', msg_id: 'doc-rx-1', from_user_id: 'cust-rx', from_user_type: 2, content: 'hello' });
      assert.deepEqual(r.body['reply'], { scheduled: true, reason: 'scheduled' });
      h.clock.advance(2000); // the quiet period
      const delivery = () => h.admin.deliveries.list(undefined, 1)[0]!;
      const first = await eventually(() => delivery().attempts === 1 && delivery(), 'the first attempt');
      assert.equal(first.lastStatus, 503);
      assert.equal(first.state, 'pending', 'a 503 is retried; a 401 would have made it dead');
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
