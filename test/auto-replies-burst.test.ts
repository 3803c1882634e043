import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
const N = 12;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('auto replies: a burst of quiet periods ending together (issue 10)', () => {
  let h: Harness;
  let rx: Receiver;
  let eng: ReturnType<typeof scriptedEngine>;

  beforeEach(async () => {
    rx = await startReceiver();
    eng = scriptedEngine();
    // Every reading of the per-turn budget's clock costs 1 ms: about two due conversations per turn.
    let t = 0;
    h = await startHarness({ engine: eng.engine, turnClock: () => t++ });
    h.addClient('acme', { sendUrl: rx.url }, SECRET);
  });
  afterEach(async () => {
    await h.stop();
    await rx.close();
  });

  it('answers N conversations due in the same millisecond over several turns, in order, each once', async () => {
    for (let i = 0; i < N; i++) {
      await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `cust-${i}`, from_user_type: 2, content: `question ${i}` });
    }
    h.clock.advance(2000);
    assert.equal(eng.calls.length, 0, 'the timers only queue their conversations');
    const perTurn: number[] = [];
    while (eng.calls.length < N && perTurn.length < 100) {
      const before = eng.calls.length;
      await nextTurn();
      perTurn.push(eng.calls.length - before);
    }
    assert.ok(perTurn.filter((n) => n > 0).length >= 4, `spread over several turns: ${perTurn.join(',')}`);
    assert.ok(Math.max(...perTurn) < N, 'never all in one turn');
    const asked = eng.calls.map((c) => c.context.at(-1)?.content);
    assert.deepEqual(asked, Array.from({ length: N }, (_, i) => `question ${i}`), 'in the order their quiet periods ended');
    await eventually(() => rx.received.length === N, 'every reply delivered');
    const answered = new Set(rx.received.map((d) => d.body.message_info['content']));
    assert.equal(answered.size, N, 'one reply per conversation, none twice');
  });
});
