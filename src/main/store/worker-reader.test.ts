import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { threadId } from 'node:worker_threads';
import { startReadWorker, inProcessReads, ReadError } from './worker-reader.ts';
import { fixtureReads } from './worker-reader.fixture.ts';
import { dispatch } from '../console-api/handlers.ts';
import type { Caller } from '../../shared/console-roles.ts';

const OWNER: Caller = { role: 'admin', owner: true, account: null, address: null, session: null };
import type { ConsoleHandlers } from '../../shared/console-api.ts';

const ENTRY = new URL('./worker-reader.fixture.ts', import.meta.url);

async function start(logs: string[] = []) {
  return startReadWorker(ENTRY, null, fixtureReads, (line) => logs.push(line));
}

describe('the read thread', () => {
  it('answers named reads with plain data, off this thread', async () => {
    const r = await start();
    try {
      assert.deepEqual(await r.reads.echo({ a: [1, 'x', null], m: new Map([[1, 2]]) }), { a: [1, 'x', null], m: new Map([[1, 2]]) });
      assert.equal(await r.reads.sum(2, 3), 5);
      assert.notEqual(await r.reads.thread(), threadId);
      // The same map in-process: the read thread off.
      assert.equal(await inProcessReads(fixtureReads).thread(), threadId);
    } finally {
      await r.close();
    }
  });

  it('a failed read rejects with its message, and the console API answers it as data', async () => {
    const r = await start();
    try {
      await assert.rejects(r.reads.fail('no such table: x'), (e: Error) => e instanceof ReadError && e.message === 'no such table: x');
      await assert.rejects(r.reads.notPlain(), /returned what cannot cross threads/);
      await assert.rejects(r.reads.echo(() => 1), /could not be cloned/);
      const handlers = { listConversations: () => r.reads.fail('disk I/O error') } as unknown as ConsoleHandlers;
      assert.deepEqual(await dispatch(handlers, 'listConversations', {}, OWNER), {
        ok: false,
        error: { code: 'internal_error', message: 'the service failed to do this; it has been logged' },
      });
      assert.equal(await r.reads.sum(1, 1), 2, 'the thread keeps serving');
    } finally {
      await r.close();
    }
  });

  it('a thread that stops is logged once and started again; the reads it held fail, later ones are answered', async () => {
    const logs: string[] = [];
    const r = await start(logs);
    try {
      const before = await r.reads.thread();
      const held = r.reads.busy(50);
      await assert.rejects(r.reads.exit(7), /the read thread stopped before answering \(exited with code 7\)/);
      // busy(50) was answered before exit(7) ran: reads are answered in order.
      assert.equal(await held, 50);
      const after = await r.reads.thread();
      assert.notEqual(after, before);
      assert.deepEqual(logs, ['console reads: the read thread exited with code 7; 1 read(s) failed; starting it again']);
    } finally {
      await r.close();
    }
  });

  it('after three stops in a row, reads run in-process, logged once', async () => {
    const logs: string[] = [];
    const r = await start(logs);
    try {
      for (let i = 0; i < 3; i++) await assert.rejects(r.reads.exit(3));
      assert.equal(await r.reads.thread(), threadId);
      assert.equal(logs.length, 3);
      assert.match(logs[2]!, /3 times in a row; reads run on the main thread from now on$/);
    } finally {
      await r.close();
    }
  });

  it('close answers the reads already sent, ends the thread, then refuses reads', async () => {
    const r = await start();
    const pending = r.reads.busy(100);
    await r.close();
    assert.equal(await pending, 100);
    await assert.rejects(r.reads.sum(1, 2), /the service is stopping/);
  });
});
