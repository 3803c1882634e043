import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { spawnServe, cli, secretFrom } from './helpers/processes.ts';
import { eventually } from './helpers/receiver.ts';
import { holdRequest, inFlightGauge } from './helpers/held-request.ts';
import { signBody } from './helpers/sign.ts';

const now = () => Math.floor(Date.now() / 1000);

async function send(endpoint: string, secret: string, info: Record<string, unknown>) {
  const r = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signBody('acme', secret, info, now())),
  });
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> };
}

/** 'connected' or the error code of a bare TCP connect to the endpoint's port. */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const msg = (id: string) => ({ event_type: 'auto_dialog', msg_id: id, from_user_id: `cust-${id}`, from_user_type: 2, content: `message ${id}` });

describe('restart durability (separate processes, same data dir)', () => {
  it('serve prints its endpoint and console lines; SIGTERM answers every request in flight (200, stored) and refuses new connections, then exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    const server = await spawnServe(dir);
    assert.match(server.endpoint, /^http:\/\/127\.0\.0\.1:\d+\/custom-im\/chat-messages$/);
    assert.match(server.console, /^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{20,}$/);

    // Held at a known point: headers and all of the body but its last byte are sent, so the
    // server has taken each request (it counts it in flight) and waits for the rest.
    const HELD = 20;
    const held = Array.from({ length: HELD }, (_, i) => holdRequest(server.endpoint, JSON.stringify(signBody('acme', secret, msg(`t${i}`), now()))));
    const inFlight = await eventually(async () => {
      const n = inFlightGauge(await (await fetch(`${server.base}/metrics`)).text());
      return n === HELD + 1 && n; // + the /metrics request itself
    }, `the server counting ${HELD} requests in flight`, 10_000);
    assert.equal(inFlight, HELD + 1);

    server.child.kill('SIGTERM');
    await eventually(() => server.stderr().includes('SIGTERM: finishing in-flight requests'), 'shutdown begun', 10_000);
    // From now on nothing new gets in: a connection is refused, not accepted and then cut off.
    await eventually(async () => (await connectOutcome(Number(new URL(server.endpoint).port))) === 'ECONNREFUSED', 'the listener closed', 10_000);
    const late = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send(server.endpoint, secret, msg(`late${i}`)).then(
        (r) => `answered ${r.status}`,
        (error: unknown) => String(((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? error),
      )),
    );
    assert.deepEqual(late, Array(5).fill('ECONNREFUSED'), 'a request sent after the shutdown began is refused at connect');
    assert.equal(server.child.exitCode, null, 'still running: it waits for the requests in flight');

    for (const h of held) h.finish();
    const answered = await Promise.all(held.map((h) => h.response));
    assert.deepEqual(
      answered.map((r) => ('error' in r ? r.error : r.status)),
      Array(HELD).fill(200),
      'every request in flight when the shutdown began was answered 200',
    );
    assert.equal(await server.exit(), 0, server.stderr());

    const again = await spawnServe(dir);
    for (const [i, r] of answered.entries()) {
      assert.ok(!('error' in r));
      const replay = await send(again.endpoint, secret, msg(`t${i}`));
      assert.equal(replay.headers.get('idempotent-replayed'), 'true', `t${i}: acknowledged, so still there after the restart`);
      assert.deepEqual(replay.body, r.body);
    }
    for (let i = 0; i < 5; i++) {
      const fresh = await send(again.endpoint, secret, msg(`late${i}`));
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers.get('idempotent-replayed'), null, `late${i}: refused, so never stored`);
    }
    again.child.kill('SIGINT');
    assert.equal(await again.exit(), 0);
  });

  it('every acknowledged message survives SIGKILL (synchronous=FULL, committed before the answer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-kill-'));
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    const server = await spawnServe(dir);
    const acknowledged: Array<Record<string, unknown>> = [];
    const senders = Array.from({ length: 20 }, async (_, worker) => {
      for (let i = 0; ; i++) {
        try {
          const r = await send(server.endpoint, secret, msg(`k${worker}-${i}`));
          if (r.status === 200) acknowledged.push(r.body);
        } catch {
          return;
        }
      }
    });
    await new Promise((r) => setTimeout(r, 400));
    server.child.kill('SIGKILL');
    await Promise.all(senders);
    await server.exit();
    assert.ok(acknowledged.length > 20, `load ran (${acknowledged.length} acknowledged)`);

    const again = await spawnServe(dir);
    let missing = 0;
    for (const body of acknowledged) {
      const replay = await send(again.endpoint, secret, msg(String(body['msg_id'])));
      if (replay.headers.get('idempotent-replayed') !== 'true') missing++;
    }
    assert.equal(missing, 0, `${missing} of ${acknowledged.length} acknowledged messages were lost`);
    again.child.kill('SIGTERM');
    await again.exit();
  });

  it('a bad flag or an unusable port is a one-line error, not a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-flags-'));
    await assert.rejects(spawnServe(dir, ['--port', 'abc']), /--port must be a port number/);
    await assert.rejects(spawnServe(dir, ['--bogus']), /Unknown option '--bogus'/);
  });
});
