import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createHttpServer, CHAT_PATH } from './server.ts';
import { createMetrics } from './metrics.ts';
import { systemClock } from '../../shared/clock.ts';
import { createTurnSlicer, type TurnSlicer } from '../loop/turn-slicer.ts';
import type { ChatMessagesHandler } from './chat-messages.ts';

const BURST = 40;
const WORK_MS = 1;

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the synchronous part of a request's handling (authentication, parsing, validation)
  }
}

/**
 * Sends BURST chat requests that all become readable in the same poll, each handled with
 * WORK_MS of synchronous work; returns how many had been handled when a timer set by the first
 * one fired, and every answer's status.
 */
async function burst(slicer: TurnSlicer | undefined): Promise<{ handledBeforeTimer: number; statuses: number[] }> {
  let handled = 0;
  let handledBeforeTimer = -1;
  const chatMessages = (async () => {
    if (handled === 0) setTimeout(() => (handledBeforeTimer = handled), 0);
    busy(WORK_MS);
    handled++;
    return { status: 200, body: { ok: true } };
  }) as unknown as ChatMessagesHandler;
  const http = createHttpServer({
    chatMessages,
    metrics: createMetrics(),
    clock: systemClock,
    bodyLimitBytes: 1 << 20,
    logRequest: () => {},
    logError: (error) => assert.fail(String(error)),
    logInfo: () => {},
    slicer,
  });
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  const { port } = http.server.address() as AddressInfo;
  const sockets = await Promise.all(
    Array.from({ length: BURST }, () => new Promise<Socket>((resolve) => { const s = connect(port, '127.0.0.1', () => resolve(s)); })),
  );
  const answers = sockets.map(
    (s) =>
      new Promise<number>((resolve) => {
        let text = '';
        s.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\r\n\r\n')) resolve(Number(text.split(' ', 2)[1]));
        });
      }),
  );
  // Every connection accepted by the server before the burst.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const body = '{}';
  // All written before the server's loop runs again: its next poll finds every one readable.
  for (const s of sockets) s.write(`POST ${CHAT_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  const statuses = await Promise.all(answers);
  for (const s of sockets) s.destroy();
  await http.close();
  return { handledBeforeTimer, statuses };
}

test('a burst of chat requests is handled in budgeted slices: a timer due meanwhile fires after a few, not after all of them', async () => {
  // Without a slicer, Node handles every request of the poll before the loop turns (the control).
  const inline = await burst(undefined);
  assert.ok(inline.handledBeforeTimer >= BURST * 0.75, `inline: the timer waited for ${inline.handledBeforeTimer} of ${BURST}`);
  const sliced = await burst(createTurnSlicer({ budgetMs: 4 }));
  assert.ok(sliced.handledBeforeTimer >= 1 && sliced.handledBeforeTimer <= 10, `sliced: the timer fired after ${sliced.handledBeforeTimer} of ${BURST}`);
  assert.deepEqual(sliced.statuses, new Array<number>(BURST).fill(200), 'every request answered');
});

test('a chat handler that throws before its first await still answers its request (500, problem+json), sliced', async () => {
  const http = createHttpServer({
    chatMessages: (() => {
      throw new Error('boom');
    }) as unknown as ChatMessagesHandler,
    metrics: createMetrics(),
    clock: systemClock,
    bodyLimitBytes: 1 << 20,
    logRequest: () => {},
    logError: () => {},
    logInfo: () => {},
    slicer: createTurnSlicer(),
  });
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  const { port } = http.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}${CHAT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 500);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  await res.body?.cancel();
  await http.close();
});
