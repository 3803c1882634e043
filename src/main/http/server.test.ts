import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, Agent, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createHttpServer, CHAT_PATH, type HttpServerDeps } from './server.ts';
import { createMetrics } from './metrics.ts';
import { HttpProblem } from './problem.ts';
import { systemClock } from '../../shared/clock.ts';
import { createTurnSlicer } from '../loop/turn-slicer.ts';
import { createAddressLimiter, createPreAuthGate } from '../auth/address-limiter.ts';
import type { ChatMessagesHandler } from './chat-messages.ts';

/**
 * The slicer's time source, moved by hand: `busy(ms)` is the synchronous part of a request's
 * handling (authentication, parsing, validation) costing `ms`, without spending it.
 */
let turnMs = 0;
const turnClock = (): number => turnMs;
function busy(ms: number): void {
  turnMs += ms;
}

/** Waits, a turn of the loop at a time, until `check` holds (what it waits for is I/O in this process). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

async function start(chatMessages: () => Promise<unknown>, deps: Partial<HttpServerDeps> = {}) {
  const http = createHttpServer({
    chatMessages: chatMessages as unknown as ChatMessagesHandler,
    metrics: createMetrics(),
    clock: systemClock,
    bodyLimitBytes: 1 << 20,
    logRequest: () => {},
    logError: (error) => assert.fail(String(error)),
    logInfo: () => {},
    ...deps,
  });
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  return { http, port: (http.server.address() as AddressInfo).port };
}

/**
 * `count` connections, accepted by the server, then one chat request written on each before the
 * server's loop runs again: its next poll finds every one readable. Resolves to the sockets and
 * each answer's status (0 if the connection ended without one).
 */
async function burst(server: Server, count: number): Promise<{ sockets: Socket[]; statuses: Promise<number[]> }> {
  const port = (server.address() as AddressInfo).port;
  let accepted = 0;
  const allAccepted = new Promise<void>((resolve) => {
    const onConnection = (): void => {
      if (++accepted < count) return;
      server.off('connection', onConnection);
      resolve();
    };
    server.on('connection', onConnection);
  });
  const sockets = await Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve) => { const s = connect(port, '127.0.0.1', () => resolve(s)); })));
  const statuses = sockets.map(
    (s) =>
      new Promise<number>((resolve) => {
        let text = '';
        s.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\r\n\r\n')) resolve(Number(text.split(' ', 2)[1]));
        });
        s.on('close', () => resolve(0));
        s.on('error', () => resolve(0));
      }),
  );
  await allAccepted;
  const body = '{}';
  for (const s of sockets) s.write(`POST ${CHAT_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  return { sockets, statuses: Promise.all(statuses) };
}

/**
 * 40 requests of 1 ms each in one poll: how many were handled when the loop next turned, seen by
 * an immediate set by the first (a timer due meanwhile runs in that turn too).
 */
async function timerDuringBurst(sliced: boolean): Promise<{ handledBeforeTimer: number; statuses: number[] }> {
  let handled = 0;
  let handledBeforeTimer = -1;
  const { http } = await start(
    async () => {
      if (handled === 0) setImmediate(() => (handledBeforeTimer = handled));
      busy(1);
      handled++;
      return { status: 200, body: { ok: true } };
    },
    { slicer: sliced ? createTurnSlicer({ budgetMs: 4, now: turnClock }) : undefined },
  );
  const { sockets, statuses } = await burst(http.server, 40);
  const answered = await statuses;
  for (const s of sockets) s.destroy();
  await http.close();
  return { handledBeforeTimer, statuses: answered };
}

test('a burst of chat requests is handled in budgeted slices: a timer due meanwhile fires after a few, not after all of them', async () => {
  // Without a slicer, Node handles every request of the poll before the loop turns (the control).
  const inline = await timerDuringBurst(false);
  assert.ok(inline.handledBeforeTimer >= 30, `inline: the timer waited for ${inline.handledBeforeTimer} of 40`);
  const sliced = await timerDuringBurst(true);
  assert.ok(sliced.handledBeforeTimer >= 1 && sliced.handledBeforeTimer <= 10, `sliced: the timer fired after ${sliced.handledBeforeTimer} of 40`);
  assert.deepEqual(sliced.statuses, new Array<number>(40).fill(200), 'every request answered');
});

test('sliced, the address gate still holds a burst back: requests queued together are asked again when their turn comes', async () => {
  let handled = 0;
  const { http } = await start(
    async () => {
      handled++;
      busy(0.2);
      throw new HttpProblem('invalid_signature', 'the signature does not match');
    },
    {
      slicer: createTurnSlicer({ budgetMs: 4, now: turnClock }),
      preAuthGate: createPreAuthGate(createAddressLimiter({ enabled: true, perSecond: 1, burst: 10, maxAddresses: 100 })),
    },
  );
  const { sockets, statuses } = await burst(http.server, 150);
  const answered = await statuses;
  for (const s of sockets) s.destroy();
  await http.close();
  // Ten tokens; each slice's refusals are charged before the next slice asks again.
  assert.ok(handled <= 10 + 40, `${handled} of 150 were parsed and checked`);
  assert.equal(answered.filter((s) => s === 429).length, 150 - handled);
  assert.equal(answered.filter((s) => s === 401).length, handled);
});

test('sliced, a request whose client went away while it waited is not handled', async () => {
  let handled = 0;
  const { http } = await start(
    async () => {
      handled++;
      busy(1);
      return { status: 200, body: { ok: true } };
    },
    { slicer: createTurnSlicer({ budgetMs: 4, now: turnClock }), logInfo: () => {} },
  );
  const { sockets } = await burst(http.server, 40);
  // The clients leave once the first request is being handled: the rest wait in the slicer.
  await until(() => handled > 0);
  for (const s of sockets) s.destroy();
  while (http.inFlight() > 0) await http.requestEnded();
  assert.ok(handled < 40, `${handled} of 40 handled after their clients left`);
  await http.close();
});

test('close ends while clients keep reconnecting: no new connection is accepted once it is called', { timeout: 30_000 }, async () => {
  const { http, port } = await start(
    async () => {
      busy(0.3);
      await new Promise((resolve) => setImmediate(resolve)); // the writer's answer
      return { status: 200, body: { ok: true } };
    },
    { slicer: createTurnSlicer({ budgetMs: 4, now: turnClock }), logInfo: () => {} },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  let stop = false;
  let answered = 0;
  const loop = (): void => {
    if (stop) return;
    const req = request({ port, host: '127.0.0.1', path: CHAT_PATH, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      answered++;
      res.resume();
      res.on('end', loop);
    });
    req.on('error', () => setTimeout(loop, 1));
    req.end('{}');
  };
  for (let i = 0; i < 50; i++) loop();
  // Every client has been answered at least once and reconnects at once: the server is busy.
  await until(() => answered >= 100);
  // It resolves, or the test's own timeout fails it: no new connection is accepted meanwhile.
  await http.close();
  stop = true;
  agent.destroy();
});

test('a chat handler that throws before its first await still answers its request (500, problem+json), sliced', async () => {
  const { http, port } = await start(
    (() => {
      throw new Error('boom');
    }) as unknown as () => Promise<unknown>,
    { slicer: createTurnSlicer(), logError: () => {} },
  );
  const res = await fetch(`http://127.0.0.1:${port}${CHAT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 500);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  await res.body?.cancel();
  await http.close();
});
