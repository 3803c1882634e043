import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { startReceiver, eventually, verifyDelivery, type Receiver } from './helpers/receiver.ts';
import { addPgClient, post, preparePgInstallation, spawnPgNode, type PgNode } from './helpers/pg-node.ts';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MAIN_V8_FLAGS } from '../src/main/runtime-flags.ts';

const SECRET = 'pg-nodes-secret-0123456789';

/** What the shared database holds of due work and who waits on what: said when a wait times out. */
async function diagnose(url: string): Promise<string> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const q = async (sql: string) => JSON.stringify((await db.query(sql)).rows);
    return [
      `due_replies ${await q('SELECT conversation_id, due_at, last_message_id, lease_holder, lease_until, lease_count FROM due_replies')}`,
      `deliveries ${await q('SELECT id, conversation_id, state, attempts, next_attempt_at, lease_holder, lease_until, lease_count FROM deliveries ORDER BY id')}`,
      `messages ${await q("SELECT id, msg_id, reply_outcome FROM messages ORDER BY id")}`,
      `activity ${await q("SELECT application_name, state, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")}`,
    ].join('; ');
  } finally {
    await db.end();
  }
}

describe('choosing the store', () => {
  it('refuses a --store or SWITCHBOARD_STORE that is not a postgres:// URL with one line, before it touches anything', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-store-flag-'));
    const serve = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [...MAIN_V8_FLAGS, 'src/main/headless.ts', '--data-dir', dataDir, ...args], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
    const flag = serve(['--store', 'mysql://db/x']);
    assert.equal(flag.status, 1);
    assert.equal(flag.stderr.trim(), 'switchboard: --store must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "mysql://db/x"');
    const env = serve([], { SWITCHBOARD_STORE: 'sqlite' });
    assert.equal(env.status, 1);
    assert.match(env.stderr, /^switchboard: SWITCHBOARD_STORE must be a postgres:\/\/ URL/);
    assert.equal(existsSync(join(dataDir, 'secret.key')), false, 'no key file made, no database opened');
  });
});

/**
 * Several `serve --store postgres://…` processes on one database (issue 30): any node takes any
 * request, and the service behaves as one.
 */
describe('two nodes on one PostgreSQL database', { skip: postgresSkipReason(), timeout: 180_000 }, () => {
  let server: PgServer;
  let receiver: Receiver;
  let nodes: PgNode[] = [];
  let storeUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-nodes-'));
  const keyFile = join(dir, 'shared.key');

  before(async () => {
    server = await startPostgres();
    // Started together: one migrates under the advisory lock, the other waits and finds nothing to do.
    // A short query time-out, so that the frozen-server test below sees its 503 in seconds; 10 s
    // leases, so that a claim whose commit was acknowledged into a dropped connection (the node
    // never learns it holds it) is free again well within the outage test's wait.
    const prepared = await preparePgInstallation(server.url, dir, ['a', 'b'], { storeQueryTimeoutMs: 2000, deliveryLeaseSeconds: 10, replyLeaseSeconds: 10 });
    storeUrl = prepared.storeUrl;
    receiver = await startReceiver();
    nodes = await Promise.all(prepared.dataDirs.map((d) => spawnPgNode(d, storeUrl, prepared.keyFile)));
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { sendUrl: receiver.url, quietSeconds: 0.2, quietMaxSeconds: 1, fallbackText: 'A person will answer soon.' });
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    await db.query("INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ('What are your opening hours?', 'We are open 9 to 5.', '[\"when are you open\"]', 1, 1)");
    await db.end();
  });
  after(async () => {
    if (process.env.PG_NODES_DEBUG) for (const n of nodes) console.error(`--- ${n.nodeId}\n${n.stderr()}`);
    await Promise.all(nodes.map((n) => n.stop()));
    await receiver?.close();
    await server?.stop();
  });

  it('migrates once, each node naming itself', () => {
    assert.equal(nodes.length, 2);
    assert.notEqual(nodes[0]!.nodeId, nodes[1]!.nodeId);
    const applied = nodes.filter((n) => /applied migrations 1, 2, 3, 4, 5, 6/.test(n.stderr()));
    assert.equal(applied.length, 1, nodes.map((n) => n.stderr()).join('\n---\n'));
  });

  it('delivers every auto reply once, in order per conversation, whichever node each message reached', async () => {
    const conversations = 4;
    const rounds = 3;
    const before = receiver.received.length;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: conversations }, async (_, c) => {
          const node = nodes[(round + c) % 2]!;
          const r = await post(node.endpoint, 'shop', SECRET, {
            event_type: 'auto_dialog',
            msg_id: `order-${c}-${round}`,
            from_user_id: `customer-${c}`,
            to_user_id: 'shop-bot',
            content: 'When are you open?',
            message_type: 1,
            from_user_type: 2,
          });
          assert.equal(r.status, 200, JSON.stringify(r.json));
        }),
      );
      // Each round's message is answered before the next is sent: a reply of its own per round.
      await eventually(() => receiver.received.length - before >= conversations * (round + 1), `round ${round + 1}'s replies`, 30_000).catch(async (error: unknown) => {
        const health = await Promise.all(nodes.map((n) => fetch(n.endpoint.replace('/custom-im/chat-messages', '/healthz'), { signal: AbortSignal.timeout(2000) }).then((r) => r.status, (e: Error) => e.message)));
        throw new Error(`${(error as Error).message}; health ${health.join(',')}; the database then: ${await diagnose(storeUrl)}; nodes: ${nodes.map((n) => n.stderr()).join(' | ')}`);
      });
    }
    const got = receiver.received.slice(before);
    assert.equal(got.length, conversations * rounds, 'never twice');
    for (const r of got) assert.ok(verifyDelivery(r, SECRET), 'signed with the client secret');
    assert.equal(new Set(got.map((r) => r.body.message_info['msg_id'])).size, got.length);
    for (let c = 0; c < conversations; c++) {
      const replies = got.filter((r) => r.body.message_info['to_user_id'] === `customer-${c}`);
      assert.deepEqual(replies.map((r) => r.body.message_info['reply_to']), Array.from({ length: rounds }, (_, round) => [`order-${c}-${round}`]), 'in order');
      assert.ok(replies.every((r) => r.body.message_info['content'] === 'We are open 9 to 5.'));
    }
  });

  it('refuses on one node a signed request another node accepted, and answers an idempotent retry from the stored response', async () => {
    const [a, b] = nodes;
    const first = await post(a!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'replayed-1', from_user_id: 'replayer', to_user_id: 'shop-bot', content: 'hi', message_type: 1, from_user_type: 2 });
    assert.equal(first.status, 200);
    const again = await post(b!.endpoint, 'shop', SECRET, {}, first.sent);
    assert.equal(again.status, 200, 'an exact retry with a msg_id gets the first response');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.json, first.json);

    const noMsgId = await post(a!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', from_user_id: 'replayer', to_user_id: 'shop-bot', content: 'no id', message_type: 1, from_user_type: 2 });
    assert.equal(noMsgId.status, 200);
    const replayed = await post(b!.endpoint, 'shop', SECRET, {}, noMsgId.sent);
    assert.equal(replayed.status, 409);
    assert.equal(replayed.headers.get('content-type'), 'application/problem+json');
    assert.equal(replayed.json['code'], 'replayed_request');
  });

  it('refuses a message holding U+0000, which PostgreSQL text cannot store, with a clear 400 and nothing stored', async () => {
    const r = await post(nodes[0]!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'nul-1', from_user_id: 'nul', to_user_id: 'shop-bot', content: 'a\u0000b', message_type: 1, from_user_type: 2 });
    assert.equal(r.status, 400);
    assert.equal(r.json['code'], 'validation_failed');
    assert.match(String(r.json['detail']), /U\+0000/);
    const retried = await post(nodes[1]!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'nul-1', from_user_id: 'nul', to_user_id: 'shop-bot', content: 'ab', message_type: 1, from_user_type: 2 });
    assert.equal(retried.status, 200, 'the msg_id was not used up');
  });

  it('answers a website visitor on either node with what was said on the other', async () => {
    const [a, b] = nodes;
    const info = (content: string, msgId: string) => ({ event_type: 'website_dialog', msg_id: msgId, from_user_id: 'visitor-1', to_user_id: 'shop-site', content, message_type: 1, from_user_type: 2 });
    const one = await post(a!.endpoint, 'shop', SECRET, info('When are you open?', 'web-1'));
    assert.equal(one.status, 200, JSON.stringify(one.json));
    assert.equal((one.json['reply'] as { content: string } | undefined)?.content ?? one.json['content'], 'We are open 9 to 5.');
    const two = await post(b!.endpoint, 'shop', SECRET, info('and on Sunday?', 'web-2'));
    assert.equal(two.status, 200);
    assert.equal(two.json['conversation_id'], one.json['conversation_id'], 'one conversation across nodes');
  });

  it('answers 503 with Retry-After while PostgreSQL is down, serves again when it is back without a restart, and loses no acknowledged message', async () => {
    const sent = new Map<string, number>(); // msg_id → last status
    const unavailable: Array<{ status: number; retryAfter: string | null; code: unknown }> = [];
    let stop = false;
    let n = 0;
    const load = async (worker: number): Promise<void> => {
      while (!stop) {
        const msgId = `outage-${worker}-${n++}`;
        // A good integrator retries a 503 with the same msg_id, signed anew, until it is taken.
        for (let attempt = 0; ; attempt++) {
          const r = await post(nodes[(worker + attempt) % 2]!.endpoint, 'shop', SECRET, {
            event_type: 'auto_dialog', msg_id: msgId, from_user_id: `outage-customer-${msgId}`, to_user_id: 'shop-bot', content: 'When are you open?', message_type: 1, from_user_type: 2,
          });
          sent.set(msgId, r.status);
          if (r.status === 200) break;
          unavailable.push({ status: r.status, retryAfter: r.headers.get('retry-after'), code: r.json['code'] });
          await new Promise((resolve) => setTimeout(resolve, 50)); // the integrator's own back-off
        }
      }
    };
    const ok = (): number => [...sent.values()].filter((s) => s === 200).length;
    const workers = [0, 1, 2, 3].map(load);
    await eventually(() => ok() >= 20, 'requests taken before the outage', 30_000);
    const probe = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await fetch(new URL(path, nodes[0]!.endpoint));
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    assert.deepEqual(await probe('/readyz'), { status: 200, body: { status: 'ready' } });
    await server.pause();
    await eventually(() => unavailable.length >= 8, '503s during the outage', 30_000);
    // Alive, but not ready: a balancer checking /readyz sends the messages to a node that can store them.
    assert.deepEqual(await probe('/healthz'), { status: 200, body: { status: 'ok' } });
    await eventually(async () => (await probe('/readyz')).status === 503, '/readyz 503 during the outage', 10_000);
    const notReady = await probe('/readyz');
    assert.equal(notReady.body['code'], 'service_unavailable');
    assert.match(String(notReady.body['detail']), /^not ready: the database/);
    await server.resume();
    await eventually(async () => (await probe('/readyz')).status === 200, '/readyz ready again', 30_000);
    const atResume = ok();
    await eventually(() => ok() >= atResume + 20, 'requests taken after PostgreSQL came back', 30_000);
    stop = true;
    await Promise.all(workers);

    assert.ok(unavailable.every((u) => u.status === 503 && u.code === 'service_unavailable' && Number(u.retryAfter) > 0), JSON.stringify(unavailable.filter((u) => u.status !== 503 || u.code !== 'service_unavailable' || !(Number(u.retryAfter) > 0)).slice(0, 3)));
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    try {
      const stored = (await db.query<{ msg_id: string; n: string }>("SELECT msg_id, count(*) AS n FROM messages WHERE msg_id LIKE 'outage-%' GROUP BY msg_id")).rows;
      assert.deepEqual(stored.filter((r) => Number(r.n) !== 1), [], 'each message stored once');
      const storedIds = new Set(stored.map((r) => r.msg_id));
      assert.deepEqual([...sent.keys()].filter((id) => !storedIds.has(id)), [], 'every acknowledged message is stored');
      // The nodes carried on by themselves: every message is answered and delivered.
      await eventually(() => {
        const answered = new Set(receiver.received.flatMap((r) => r.body.message_info['reply_to'] as string[]));
        return [...sent.keys()].every((id) => answered.has(id));
      }, 'a delivered reply to every message sent through the outage', 30_000);
    } finally {
      await db.end();
    }
  });

  it('answers 503 within seconds while PostgreSQL is frozen (no answer, no reset: a partition), and serves again when it thaws', async () => {
    // The postmaster and every backend stopped: connections stay open and nothing answers.
    const postmaster = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const pids = [postmaster, ...execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number)];
    const signal = (s: NodeJS.Signals) => pids.forEach((pid) => { try { process.kill(pid, s); } catch { /* gone */ } });
    const ask = (node: PgNode, id: string) =>
      post(node.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: id, from_user_id: `frozen-${id}`, to_user_id: 'shop-bot', content: 'When are you open?', message_type: 1, from_user_type: 2 });
    signal('SIGSTOP');
    try {
      const started = Date.now();
      const during = await Promise.all(nodes.map((n, i) => ask(n, `frozen-${i}`)));
      const took = Date.now() - started;
      for (const r of during) {
        assert.equal(r.status, 503, JSON.stringify(r.json));
        assert.equal(r.json['code'], 'service_unavailable');
        assert.ok(Number(r.headers.get('retry-after')) > 0);
      }
      assert.ok(took < 12_000, `answered after ${took} ms`);
    } finally {
      signal('SIGCONT');
    }
    await eventually(async () => (await ask(nodes[0]!, `thawed-${Date.now()}`)).status === 200, 'a 200 once PostgreSQL answers again', 20_000);
  });

  it('loses no acknowledged message when a node is killed (kill -9), twice: another node takes over its deliveries and due replies', async () => {
    // This test's own nodes, with 2 s leases so that a takeover is quick; the first two leave.
    await Promise.all(nodes.splice(0).map((n) => n.stop()));
    const shortLeases = (name: string): string => {
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, 'config.json'), JSON.stringify({ deliveryLeaseSeconds: 2, replyLeaseSeconds: 2 }));
      return join(dir, name);
    };
    const hooks = await startReceiver();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    hooks.respond = () => (holding ? { status: 200, hold: held } : { status: 200 });
    await addPgClient(storeUrl, keyFile, 'kill', SECRET, { sendUrl: hooks.url, quietSeconds: 0.2, quietMaxSeconds: 1 });
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    const ask = (node: PgNode, msgId: string) =>
      post(node.endpoint, 'kill', SECRET, { event_type: 'auto_dialog', msg_id: msgId, from_user_id: `who-${msgId}`, to_user_id: 'shop-bot', content: 'When are you open?', message_type: 1, from_user_type: 2 });
    try {
      // Round 1: the victim alone makes the replies and sends them; the receiver holds every answer.
      let victim = await spawnPgNode(shortLeases('victim-1'), storeUrl, keyFile);
      nodes.push(victim);
      const first = Array.from({ length: 8 }, (_, i) => `kill-1-${i}`);
      for (const id of first) assert.equal((await ask(victim, id)).status, 200);
      await eventually(() => hooks.received.length >= first.length, 'the victim sending every reply', 30_000);
      const survivor = await spawnPgNode(shortLeases('survivor'), storeUrl, keyFile);
      nodes.push(survivor);
      victim.child.kill('SIGKILL');
      await victim.exit();
      holding = false;
      release();
      // The survivor claims them once the victim's leases run out, and sends them again, same Idempotency-Key.
      await eventually(async () => Number((await db.query("SELECT count(*) AS n FROM deliveries WHERE client_id = 'kill' AND state = 'sent'")).rows[0].n) === first.length, 'the survivor sending the victim\'s deliveries', 30_000);
      const keys = hooks.received.map((r) => r.key);
      for (const key of new Set(keys)) assert.equal(keys.filter((k) => k === key).length, 2, 'sent by the victim, then again by the survivor');
      const claims = (await db.query("SELECT lease_count AS n FROM deliveries WHERE client_id = 'kill'")).rows.map((r: { n: number }) => r.n);
      assert.deepEqual(claims, first.map(() => 2), 'each claimed twice: counted as an at-least-once resend');

      // Round 2: a new victim acknowledges messages and dies before their quiet period ends.
      victim = await spawnPgNode(shortLeases('victim-2'), storeUrl, keyFile);
      nodes.push(victim);
      const second = Array.from({ length: 8 }, (_, i) => `kill-2-${i}`);
      for (const [i, id] of second.entries()) assert.equal((await ask(i % 2 ? survivor : victim, id)).status, 200);
      victim.child.kill('SIGKILL');
      await victim.exit();
      await eventually(() => {
        const answered = new Set(hooks.received.flatMap((r) => r.body.message_info['reply_to'] as string[]));
        return second.every((id) => answered.has(id));
      }, 'a reply to every message the second victim acknowledged', 30_000);

      // The rows agree with what the integrator saw.
      const messages = (await db.query("SELECT msg_id, reply_outcome FROM messages WHERE client_id = 'kill' ORDER BY msg_id")).rows;
      assert.deepEqual(messages.map((m: { msg_id: string }) => m.msg_id), [...first, ...second].sort(), 'every acknowledged message stored, once');
      assert.ok(messages.every((m: { reply_outcome: string }) => m.reply_outcome === 'answered'), JSON.stringify(messages));
      // A reply the receiver has is recorded as sent a moment later.
      await eventually(async () => Number((await db.query("SELECT count(*) AS n FROM deliveries WHERE client_id = 'kill' AND state <> 'sent'")).rows[0].n) === 0, 'every delivery recorded as sent');
      const timers = (await db.query("SELECT count(*) AS n FROM due_replies d JOIN conversations c ON c.id = d.conversation_id WHERE c.client_id = 'kill'")).rows[0].n;
      assert.equal(Number(timers), 0, 'no reply timer left behind');
    } finally {
      release();
      await db.end();
      await hooks.close();
    }
  });
});
