import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serialQueue } from './serial-queue.ts';

describe('serialQueue', () => {
  it('runs jobs one at a time, in the order asked, and a failed job does not stop the next', async () => {
    const queue = serialQueue();
    const log: string[] = [];
    let open: () => void = () => {};
    const first = queue(async () => {
      log.push('reload start');
      await new Promise<void>((resolve) => (open = resolve));
      log.push('reload end');
    });
    const failing = queue(async () => {
      log.push('page');
      throw new Error('unreachable');
    });
    const last = queue(async () => void log.push('after'));
    await Promise.resolve();
    assert.deepEqual(log, ['reload start'], 'the page waits for the reload');
    open();
    await first;
    await assert.rejects(failing, /unreachable/);
    await last;
    assert.deepEqual(log, ['reload start', 'reload end', 'page', 'after']);
  });
});
