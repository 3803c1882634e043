import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { spawnServe } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { prepareDataDir, SCALE_CLIENT } from '../bench/scale/build.ts';
import { databasePath } from '../src/main/store/data-dir.ts';

// bench/scale's loader killed (SIGKILL, out of memory, Ctrl-\) after some batches committed: the
// store must still index what it holds and what it is sent afterwards.

test('a bulk load killed midway leaves a store whose messages, loaded and new, are searchable once served', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-loader-kill-'));
  try {
    const { secret, kb } = prepareDataDir(dir, 'http://127.0.0.1:9/');
    const script = join(dir, 'load.mjs');
    const loader = new URL('../bench/scale/loader.ts', import.meta.url).href;
    writeFileSync(script, `
      import { loadHistory } from ${JSON.stringify(loader)};
      const kb = ${JSON.stringify(kb.map((e) => ({ question: e.question })))};
      let batches = 0;
      await loadHistory({ dataDir: ${JSON.stringify(dir)}, clientId: ${JSON.stringify(SCALE_CLIENT)}, secret: ${JSON.stringify(secret)},
        shape: { entries: 400, conversations: 50, longConversation: 0, spanMs: 3_600_000 }, kb, batch: 20,
        onProgress: () => { if (++batches === 3) process.kill(process.pid, 'SIGKILL'); } });
    `);
    const child = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    const loaded = (() => {
      const db = new DatabaseSync(databasePath(dir), { readOnly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM messages WHERE content IS NOT NULL').get() as { n: number }).n;
      } finally {
        db.close();
      }
    })();
    assert.ok(loaded >= 60, `3 batches of 20 exchanges committed (${loaded} messages)`);

    const server = await spawnServe(dir);
    try {
      const now = Math.floor(Date.now() / 1000);
      const info = { event_type: 'auto_dialog', msg_id: 'after-kill', from_user_id: 'late', from_user_type: 2, content: 'kilo zulu after the crash' };
      const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody(SCALE_CLIENT, secret, info, now)) });
      assert.equal(res.status, 200, await res.text());
      const r = await fetch(`${server.consoleBase}api/listConversations`, { method: 'POST', headers: { authorization: `Bearer ${server.consoleToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ search: 'kilo zulu', view: 'all', limit: 10 }) });
      const body = (await r.json()) as { ok: boolean; value: { items: unknown[] } };
      assert.equal(body.value.items.length, 1, 'a message sent after the kill is found');
    } finally {
      server.child.kill('SIGTERM');
      await server.exit();
    }
    const db = new DatabaseSync(databasePath(dir), { readOnly: true });
    try {
      const stored = (db.prepare('SELECT count(*) AS n FROM messages WHERE content IS NOT NULL').get() as { n: number }).n;
      const indexed = (db.prepare('SELECT count(*) AS n FROM messages_fts').get() as { n: number }).n;
      assert.equal(indexed, stored, 'the loaded messages are indexed too');
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
