import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NotListeningError, postWhenListening } from './post-when-listening.ts';

const listen = (server: Server, port = 0): Promise<number> =>
  new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

test('a refused connection is tried again until the server listens, and the wait is announced once', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  const port = await listen(server);
  await close(server);
  let announced = 0;
  const response = postWhenListening(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }, {
    waitMs: 60_000,
    answerTimeoutMs: 5_000,
    retryEveryMs: 20,
    // The server comes up when the first refusal is announced: no timing guess.
    onWaiting: () => {
      announced++;
      void listen(server, port);
    },
  });
  try {
    assert.equal(await (await response).text(), 'ok');
    assert.equal(announced, 1);
  } finally {
    await close(server);
  }
});

test('an HTTP error is an answer: returned at once, not tried again', async () => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.statusCode = 503;
    res.end();
  });
  const port = await listen(server);
  try {
    const res = await postWhenListening(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }, { waitMs: 60_000, answerTimeoutMs: 5_000, onWaiting: () => assert.fail('no wait') });
    assert.equal(res.status, 503);
    assert.equal(requests, 1);
  } finally {
    await close(server);
  }
});

test('after the wait, a refused connection is a NotListeningError naming the refusal', async () => {
  const server = createServer();
  const port = await listen(server);
  await close(server);
  let clock = 0;
  const attempt = postWhenListening(`http://127.0.0.1:${port}/`, { method: 'POST' }, {
    waitMs: 1_000,
    answerTimeoutMs: 5_000,
    retryEveryMs: 1,
    // Each look at the clock moves it 300 ms: the wait runs out after a few tries.
    nowMs: () => (clock += 300),
    onWaiting: () => {},
  });
  await assert.rejects(attempt, (e: Error) => e instanceof NotListeningError && e.waitedMs >= 1_000 && /ECONNREFUSED/.test(e.refusal));
});
