import assert from 'node:assert/strict';
import type { StoreContract } from '../contract.ts';
import type { AttemptRecord, DeliveryKind } from '../deliveries.ts';

/** One store as the scenario drives it: its deliveries, and the reply a delivery carries. */
export interface Scene {
  deliveries: StoreContract['deliveries'];
  /** A reply in `conversationId` (its client and conversation made when new); returns its id. */
  reply(clientId: string, conversationId: string, kind: DeliveryKind, msgId: string): Promise<number>;
  close(): Promise<void>;
}

const STOP = 'auto-reply stopped by the console';
const BY_OPERATOR = 'cancelled by 王小明 from the console';

/**
 * Every function of the deliveries group, once or more, on one store: asserts what each must
 * give, and returns everything it read so that the two stores' runs can be compared whole.
 */
export async function deliveryScenario(s: Scene): Promise<Array<[string, unknown]>> {
  const d = s.deliveries;
  const seen: Array<[string, unknown]> = [];
  const read = async <T>(label: string, value: T | Promise<T>): Promise<T> => {
    const v = await value;
    seen.push([label, v]);
    return v;
  };
  const all = ['retrying', 'dead', 'cancelled'] as const;

  // Empty.
  assert.deepEqual(await read('due empty', d.due(1_000, 10)), []);
  assert.deepEqual(await read('clients empty', d.pendingClients()), []);
  assert.deepEqual(await read('lanes empty', d.pendingLanes('a', 64)), []);
  assert.deepEqual(await read('lane empty', d.dueInLane('a', 'http://x.test:80', 1_000, 10)), []);
  assert.equal(await read('next empty', d.nextDueAt()), null);
  assert.equal(await read('get unknown', d.get(1)), undefined);
  assert.deepEqual(await read('list empty', d.list(undefined, 10)), []);
  assert.deepEqual(await read('attempts unknown', d.attempts(1)), []);
  assert.equal(await read('last unknown', d.lastAttempt(1)), null);
  assert.equal(await read('state unknown', d.stateOf(1)), undefined);
  assert.deepEqual(await read('byIds unknown', d.byIds([1, 2])), []);
  assert.deepEqual(await read('byIds none', d.byIds([])), []);
  assert.deepEqual(await read('problems empty', d.problems(all, null, 10)), []);
  assert.deepEqual(await read('dead empty', d.deadIds(null, 10)), []);
  assert.deepEqual(await read('counts empty', d.countByState()), { pending: 0, sent: 0, dead: 0, cancelled: 0 });

  let n = 0;
  const add = async (clientId: string, conversationId: string, kind: DeliveryKind, sendUrl: string, at: number): Promise<number> => {
    const msgId = `reply-${++n}`;
    const replyId = await s.reply(clientId, conversationId, kind, msgId);
    const info = JSON.stringify({ event_type: 'ai_reply', msg_id: msgId, content: '您好，请稍等' });
    return d.insert({ kind, replyId, replyMsgId: msgId, conversationId, clientId, sendUrl, messageInfo: info, state: 'pending', nextAttemptAt: at, createdAt: 10 + n });
  };
  const d1 = await add('a', 'c1', 'auto', 'http://x.test/hook', 100);
  const d2 = await add('a', 'c1', 'auto', 'http://x.test/hook', 50); // behind d1, its conversation's older one
  const d3 = await add('a', 'c2', 'auto', 'https://y.test/in', 200);
  const d4 = await add('a', 'c3', 'operator', 'http://x.test:80/o', 150);
  const d5 = await add('a', 'c3', 'auto', 'http://x.test/hook', 5_000);
  const d6 = await add('b', 'c9', 'auto', 'not a url', 10);
  assert.deepEqual([d1, d2, d3, d4, d5, d6], [1, 2, 3, 4, 5, 6]);

  // What is due, as a whole and by lane.
  assert.deepEqual((await read('due', d.due(1_000, 10))).map((r) => r.id), [d6, d1, d4, d3]);
  assert.deepEqual((await read('due 2', d.due(1_000, 2))).map((r) => r.id), [d6, d1]);
  assert.deepEqual(await read('clients', d.pendingClients()), ['a', 'b']);
  assert.deepEqual(await read('lanes', d.pendingLanes('a', 64)), [
    { origin: 'http://x.test:80', earliestId: d2, earliestAt: 50 },
    { origin: 'https://y.test:443', earliestId: d3, earliestAt: 200 },
  ]);
  assert.deepEqual(await read('lanes b', d.pendingLanes('b', 1)), [{ origin: 'not a url', earliestId: d6, earliestAt: 10 }]);
  assert.deepEqual((await read('lane', d.dueInLane('a', 'http://x.test:80', 1_000, 10))).map((r) => r.id), [d1, d4]);
  assert.deepEqual((await read('lane except', d.dueInLane('a', 'http://x.test:80', 1_000, 10, [d1]))).map((r) => r.id), [d4]);
  assert.deepEqual((await read('lane 1', d.dueInLane('a', 'http://x.test:80', 1_000, 1))).map((r) => r.id), [d1]);
  assert.equal(await read('next', d.nextDueAt()), 10);
  const first = await read('get', d.get(d1));
  assert.deepEqual(first, {
    id: d1, kind: 'auto', replyId: 1, replyMsgId: 'reply-1', conversationId: 'c1', clientId: 'a', sendUrl: 'http://x.test/hook', origin: 'http://x.test:80',
    messageInfo: JSON.stringify({ event_type: 'ai_reply', msg_id: 'reply-1', content: '您好，请稍等' }), state: 'pending', attempts: 0, roundAttempts: 0,
    nextAttemptAt: 100, lastStatus: null, lastError: null, createdAt: 11, updatedAt: 11,
  });
  assert.equal((await read('get operator', d.get(d4)))?.kind, 'operator');
  assert.deepEqual((await read('list 3', d.list(undefined, 3))).map((r) => r.id), [d6, d5, d4]);
  assert.equal((await read('list no limit', d.list(undefined, -1))).length, 6, 'a negative limit is none, as SQLite reads it');
  assert.equal((await read('list pending', d.list('pending', 10))).length, 6);
  assert.deepEqual(await read('list dead', d.list('dead', 10)), []);
  assert.equal(await read('state', d.stateOf(d1)), 'pending');
  assert.deepEqual((await read('byIds', d.byIds([d3, d1, 999, d1]))).map((r) => r.id), [d1, d3]);

  // Tries: a retry, a death, a success; a repeat and an unknown one change nothing.
  const rec = (deliveryId: number, o: Partial<AttemptRecord> & Pick<AttemptRecord, 'state' | 'outcome' | 'now'>): Promise<boolean> | boolean =>
    d.recordAttempt({ deliveryId, attempt: 1, startedAt: o.now - 20, durationMs: 12.5, status: null, error: null, nextAttemptAt: o.now, ...o });
  assert.equal(await read('record retry', rec(d1, { state: 'pending', outcome: 'retry', status: 503, error: 'HTTP 503', nextAttemptAt: 9_000, now: 1_010 })), true);
  assert.equal(await read('record dead', rec(d6, { state: 'dead', outcome: 'dead', error: '无效的 URL', now: 1_020 })), true);
  assert.equal(await read('record sent', rec(d3, { state: 'sent', outcome: 'sent', status: 200, now: 1_030 })), true);
  assert.equal(await read('record sent again', rec(d3, { state: 'sent', outcome: 'sent', status: 200, now: 1_040, attempt: 2 })), false);
  assert.equal(await read('record unknown', rec(999, { state: 'sent', outcome: 'sent', status: 200, now: 1_040 })), false);
  assert.deepEqual(await read('attempts', d.attempts(d1)), [{ attempt: 1, startedAt: 990, durationMs: 12.5, status: 503, error: 'HTTP 503', outcome: 'retry' }]);
  assert.equal((await read('attempts sent', d.attempts(d3))).length, 1);
  assert.deepEqual(await read('last', d.lastAttempt(d1)), { status: 503, error: 'HTTP 503' });
  assert.deepEqual(await read('last sent', d.lastAttempt(d3)), { status: 200, error: null });
  const retried = await read('get retried', d.get(d1));
  assert.deepEqual([retried?.attempts, retried?.roundAttempts, retried?.nextAttemptAt, retried?.updatedAt], [1, 1, 9_000, 1_010]);

  // The console's problem list.
  assert.deepEqual((await read('problems', d.problems(all, null, 10))).map((r) => [r.id, r.problem]), [[d6, 'dead'], [d1, 'retrying']]);
  assert.deepEqual((await read('problems a', d.problems(['retrying', 'retrying'], 'a', 10))).map((r) => r.id), [d1]);
  assert.deepEqual(await read('problems dead a', d.problems(['dead'], 'a', 10)), []);
  assert.deepEqual((await read('problems 1', d.problems(all, null, 1))).map((r) => r.id), [d6]);
  assert.deepEqual(await read('dead ids', d.deadIds(null, 10)), [d6]);
  assert.deepEqual(await read('dead ids a', d.deadIds('a', 10)), []);
  assert.deepEqual(await read('counts', d.countByState()), { pending: 4, sent: 1, dead: 1, cancelled: 0 });

  // Retry now: a waiting one goes now (its schedule a step back), one due keeps its time; only a tried, pending one.
  assert.equal(await read('retry now', d.retryNow(d1, 2_000)), true);
  const now1 = await read('get retry now', d.get(d1));
  assert.deepEqual([now1?.nextAttemptAt, now1?.roundAttempts, now1?.updatedAt], [2_000, 0, 2_000]);
  assert.equal(await read('retry now due', d.retryNow(d1, 2_500)), true);
  const now2 = await read('get retry now due', d.get(d1));
  assert.deepEqual([now2?.nextAttemptAt, now2?.roundAttempts, now2?.updatedAt], [2_000, 0, 2_500]);
  assert.equal(await read('retry now untried', d.retryNow(d4, 2_000)), false);
  assert.equal(await read('retry now dead', d.retryNow(d6, 2_000)), false);
  assert.equal(await read('retry now unknown', d.retryNow(999, 2_000)), false);

  // Retry: only a dead one, with a fresh schedule.
  assert.equal(await read('retry', d.retry(d6, 3_000)), true);
  const back = await read('get retry', d.get(d6));
  assert.deepEqual([back?.state, back?.roundAttempts, back?.nextAttemptAt, back?.updatedAt, back?.attempts], ['pending', 0, 3_000, 3_000, 1]);
  assert.equal(await read('retry again', d.retry(d6, 3_000)), false);
  assert.equal(await read('retry pending', d.retry(d1, 3_000)), false);
  assert.equal(await read('record dead again', rec(d6, { state: 'dead', outcome: 'dead', error: '无效的 URL', now: 3_050, attempt: 2 })), true);

  // Cancel of a failed one (retrying, dead); never one on its first way, nor one sent.
  assert.equal(await read('cancel failed retrying', d.cancelFailed(d1, BY_OPERATOR, 3_100)), true);
  assert.equal(await read('cancel failed dead', d.cancelFailed(d6, BY_OPERATOR, 3_110)), true);
  assert.equal(await read('cancel failed untried', d.cancelFailed(d4, BY_OPERATOR, 3_100)), false);
  assert.equal(await read('cancel failed sent', d.cancelFailed(d3, BY_OPERATOR, 3_100)), false);
  // A try that was out meanwhile: counted, or (accepted) the delivery is sent after all.
  assert.equal(await read('record after cancel', rec(d1, { state: 'pending', outcome: 'retry', status: 502, error: 'HTTP 502', nextAttemptAt: 9_500, now: 3_150, attempt: 2 })), false);
  assert.equal(await read('record sent after cancel', rec(d6, { state: 'sent', outcome: 'sent', status: 200, now: 3_160, attempt: 3 })), true);
  const counted = await read('get counted', d.get(d1));
  assert.deepEqual([counted?.state, counted?.attempts, counted?.lastError, counted?.updatedAt], ['cancelled', 2, BY_OPERATOR, 3_100]);
  const sent = await read('get sent after cancel', d.get(d6));
  assert.deepEqual([sent?.state, sent?.attempts, sent?.lastStatus, sent?.lastError, sent?.updatedAt], ['sent', 3, 200, null, 3_160]);
  assert.equal((await read('attempts counted', d.attempts(d1))).length, 2);

  // The outbox's cancel, a stop's cancel of a conversation's auto replies, its Undo; an operator's answer's autoDueNow.
  assert.equal(await read('cancel', d.cancel(d4, 'auto-reply paused when the delivery was due', 3_200)), true);
  assert.equal(await read('cancel again', d.cancel(d4, 'again', 3_300)), false);
  const d7 = await add('a', 'c3', 'operator', 'http://x.test/hook', 9_999);
  assert.equal(await read('stop c3', d.cancelForConversation('c3', STOP, 4_000)), 1, 'the auto reply, not the operator’s');
  assert.equal(await read('stop c1', d.cancelForConversation('c1', STOP, 4_000)), 1);
  assert.equal(await read('stop c1 again', d.cancelForConversation('c1', STOP, 4_001)), 0);
  assert.equal(await read('undo wrong time', d.restoreCancelled('c1', STOP, 3_999, 5_000)), 0);
  assert.equal(await read('undo wrong reason', d.restoreCancelled('c1', 'auto-reply stopped by the integration', 4_000, 5_000)), 0);
  assert.equal(await read('undo', d.restoreCancelled('c3', STOP, 4_000, 5_000)), 1);
  const restored = await read('get undone', d.get(d5));
  assert.deepEqual([restored?.state, restored?.nextAttemptAt, restored?.updatedAt], ['pending', 5_000, 5_000]);
  assert.equal(await read('auto due now', d.autoDueNow('c3', 4_500)), 1);
  assert.equal((await read('get due now', d.get(d5)))?.nextAttemptAt, 4_500);
  assert.equal((await read('get operator kept', d.get(d7)))?.nextAttemptAt, 9_999);
  assert.equal(await read('auto due now again', d.autoDueNow('c3', 4_500)), 0);

  assert.deepEqual((await read('problems cancelled', d.problems(['cancelled'], null, 10))).map((r) => [r.id, r.lastError]), [
    [d2, STOP],
    [d4, 'auto-reply paused when the delivery was due'],
    [d1, BY_OPERATOR],
  ]);
  assert.deepEqual((await read('problems cancelled 2', d.problems(['cancelled', 'retrying'], null, 2))).map((r) => r.id), [d2, d4], 'the newest changes of each state');
  assert.deepEqual(await read('problems cancelled b', d.problems(['cancelled'], 'b', 10)), []);
  assert.deepEqual((await read('list cancelled', d.list('cancelled', 10))).map((r) => r.id), [d4, d2, d1]);
  assert.deepEqual(await read('counts end', d.countByState()), { pending: 2, sent: 2, dead: 0, cancelled: 3 });
  assert.deepEqual((await read('byIds end', d.byIds([d7, d6, d5, d4, d3, d2, d1]))).map((r) => r.state), ['cancelled', 'cancelled', 'sent', 'cancelled', 'pending', 'sent', 'pending']);
  assert.equal(await read('next end', d.nextDueAt()), 4_500);
  return seen;
}
