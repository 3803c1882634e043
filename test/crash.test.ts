import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { startReceiver, eventually, verifyDelivery } from './helpers/receiver.ts';
import { signBody } from './helpers/sign.ts';

/** Deterministic so a failing run can be replayed (CRASH_SEED). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 4294967296);
}

describe('crash safety (SIGKILL while replies are pending and in flight)', () => {
  it('every acknowledged message is answered after restarts, and no reply arrives twice unless it was in flight at a kill', async () => {
    const seed = Number(process.env['CRASH_SEED'] ?? 7);
    const random = rng(seed);
    const dir = mkdtempSync(join(tmpdir(), 'sb-crash-'));
    const rx = await startReceiver();
    // The receiver is slow now and then, so kills also land while attempts are in flight.
    rx.respond = () => ({ status: 200 });
    const secret = secretFrom(
      cli(dir, 'clients', 'add', 'acme', '--send-url', rx.url, '--quiet-seconds', '0.15', '--quiet-max-seconds', '0.6', '--fallback-text', 'We will get back to you.').stdout,
    );
    const acknowledged = new Map<string, string>(); // msg_id -> conversation_id
    const lifetimes: Array<{ start: number; kill: number }> = [];
    let sent = 0;

    async function send(server: ServeProcess, stopAt: number): Promise<void> {
      while (Date.now() < stopAt) {
        const customer = `cust-${Math.floor(random() * 30)}`;
        const msgId = `crash-${seed}-${sent++}`;
        const info = { event_type: 'auto_dialog', msg_id: msgId, from_user_id: customer, from_user_type: 2, content: `question ${msgId}` };
        try {
          const r = await fetch(server.endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(signBody('acme', secret, info, Math.floor(Date.now() / 1000))),
          });
          const body = (await r.json()) as { conversation_id: string; reply: { scheduled: boolean } };
          if (r.status === 200 && body.reply.scheduled) acknowledged.set(msgId, body.conversation_id);
        } catch {
          return; // killed under us: this message was never acknowledged
        }
        await new Promise((r) => setTimeout(r, random() * 40));
      }
    }

    for (let round = 0; round < 4; round++) {
      const start = Date.now();
      const server = await spawnServe(dir);
      const killAfter = 300 + random() * 900;
      const senders = Array.from({ length: 4 }, () => send(server, Date.now() + killAfter + 1000));
      await new Promise((r) => setTimeout(r, killAfter));
      server.child.kill('SIGKILL');
      await server.exit();
      // The lifetime ends when the process is gone, not when the signal was sent.
      lifetimes.push({ start, kill: Date.now() });
      await Promise.all(senders);
    }

    const final = await spawnServe(dir);
    const answered = (): Set<string> => new Set(rx.received.flatMap((r) => r.body.message_info['reply_to'] as string[]));
    await eventually(() => [...acknowledged.keys()].every((id) => answered().has(id)), 'every acknowledged message answered', 15_000).catch(() => undefined);
    final.child.kill('SIGTERM');
    await final.exit();
    await rx.close();

    const covered = answered();
    const missing = [...acknowledged.keys()].filter((id) => !covered.has(id));
    assert.ok(acknowledged.size > 50, `enough load (${acknowledged.size} acknowledged of ${sent} sent)`);
    assert.deepEqual(missing, [], `seed ${seed}: acknowledged but never answered`);
    assert.ok(rx.received.every((r) => verifyDelivery(r, secret)), 'every delivery is signed');

    const byKey = new Map<string, number[]>();
    for (const r of rx.received) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r.at]);
    const duplicates = [...byKey].filter(([, times]) => times.length > 1);
    // A second copy is allowed only for a reply whose first copy went out in a lifetime that was
    // then killed (its "sent" may not have been committed), and only one copy per such lifetime.
    // The receiver runs in this process too: a request the killed server sent just before it died
    // can be timestamped a little after we saw it exit. 500 ms of slack covers that lag.
    const SLACK = 500;
    const lifetimeOf = (t: number): number => {
      const i = lifetimes.findIndex((l) => t >= l.start && t <= l.kill + SLACK);
      return i < 0 ? lifetimes.length : i;
    };
    for (const [key, times] of duplicates) {
      const lives = times.map(lifetimeOf);
      assert.equal(new Set(lives).size, lives.length, `seed ${seed}: ${key} delivered twice within one server lifetime`);
      assert.ok(lives.slice(0, -1).every((i) => i < lifetimes.length), `seed ${seed}: ${key} re-sent without a kill in between`);
    }
    console.log(
      `crash test (seed ${seed}): ${sent} sent, ${acknowledged.size} acknowledged, ${rx.received.length} deliveries, ${byKey.size} distinct replies, ${duplicates.length} re-sent after a kill, ${lifetimes.length} kills`,
    );
  });
});
