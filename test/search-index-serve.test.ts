import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { signBody } from './helpers/sign.ts';
import { databasePath } from '../src/main/store/data-dir.ts';

// Migration 14 (search indexed once per transaction, before COMMIT): seen from outside, through a
// real `serve`, its console API, and SIGKILL.

const words = (n: number): string => `zq${n.toString(36).padStart(4, '0')}x`;

async function api<T>(s: ServeProcess, method: string, input: unknown): Promise<T> {
  const r = await fetch(`${s.consoleBase}api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${s.consoleToken}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
  const body = (await r.json()) as { ok: boolean; value: T; error?: unknown };
  assert.ok(body.ok, `${method}: ${JSON.stringify(body)}`);
  return body.value;
}

const post = (s: ServeProcess, secret: string, info: Record<string, unknown>) =>
  fetch(s.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody('acme', secret, info, Math.floor(Date.now() / 1000))) });

describe('message search through a real serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-fts-serve-'));
  let rx: Receiver;
  const started: ServeProcess[] = [];
  after(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
    await Promise.all(started.map((s) => s.exit()));
    await rx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('website_dialog and auto_dialog messages, sent concurrently, are found by a console search right after their 200; after SIGKILLs mid-load the index and its queue are sound and hold exactly the committed messages', async () => {
    rx = await startReceiver();
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', rx.url, '--quiet-seconds', '0.2').stdout);
    let n = 0;
    const acknowledged = new Set<string>();
    const send = async (s: ServeProcess, check: boolean): Promise<boolean> => {
      const i = n++;
      const token = words(i);
      const event = i % 2 === 0 ? 'website_dialog' : 'auto_dialog';
      let r: Response;
      try {
        r = await post(s, secret, { event_type: event, msg_id: `fts-${i}`, from_user_id: `cust-${i % 7}`, from_user_type: 2, content: `where is ${token} please` });
        await r.text();
      } catch {
        return false;
      }
      if (r.status !== 200) return false;
      acknowledged.add(token);
      if (check) {
        const found = await api<{ items: Array<{ customerId: string | null; peer: string }> }>(s, 'listConversations', { search: token, view: 'all', limit: 10 });
        assert.equal(found.items.length, 1, `${event} ${token} found right after its 200`);
      }
      return true;
    };

    const s1 = await spawnServe(dir);
    started.push(s1);
    // Concurrent senders, so the writer groups several jobs per transaction.
    await Promise.all(Array.from({ length: 6 }, async () => {
      for (let k = 0; k < 8; k++) await send(s1, true);
    }));
    assert.equal(acknowledged.size, 48);

    for (let round = 0; round < 2; round++) {
      const s = round === 0 ? s1 : await spawnServe(dir);
      if (round > 0) started.push(s);
      let going = true;
      const load = Promise.all(Array.from({ length: 6 }, async () => {
        while (going && (await send(s, false)));
      }));
      await new Promise((r) => setTimeout(r, 400 + round * 300));
      s.child.kill('SIGKILL');
      await s.exit();
      going = false;
      await load;
    }

    // Restart: the writer's start-up flush runs; then look at the file as the operator's tools would.
    const s3 = await spawnServe(dir);
    started.push(s3);
    assert.ok(await send(s3, true), 'serving after the kills');
    s3.child.kill('SIGTERM');
    await s3.exit();

    const db = new DatabaseSync(databasePath(dir));
    try {
      db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
      assert.equal((db.prepare('SELECT count(*) AS n FROM messages_fts_queue').get() as { n: number }).n, 0, 'the queue is empty');
      const stored = (db.prepare("SELECT count(*) AS n FROM messages WHERE content LIKE 'where is zq%'").get() as { n: number }).n;
      const indexed = (db.prepare('SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?').get('"where is zq"') as { n: number }).n;
      assert.equal(indexed, stored, 'every stored message indexed, nothing else');
      const missing = [...acknowledged].filter((t) => !(db.prepare('SELECT 1 FROM messages_fts WHERE messages_fts MATCH ?').get(`"${t}"`)));
      assert.deepEqual(missing, [], 'every acknowledged message searchable after restart');
      assert.ok(acknowledged.size > 60, `load before the kills (${acknowledged.size} acknowledged of ${n})`);
    } finally {
      db.close();
    }
  });
});
