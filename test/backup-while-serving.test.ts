import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { cli, cliAsync, secretFrom, spawnServe, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';

describe('npm run cli -- backup FILE while serve runs', () => {
  let server: ServeProcess;
  let dataDir: string;
  let secret: string;
  const send = async (i: number): Promise<number> => {
    const body = signBody('acme', secret, { event_type: 'website_dialog', msg_id: `b-${i}`, from_user_id: `visitor-${i % 50}`, content: `Where is my parcel ${i}?` }, Math.floor(Date.now() / 1000));
    const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res.status;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sb-backup-'));
    secret = secretFrom(cli(dataDir, 'clients', 'add', 'acme').stdout);
    server = await spawnServe(dataDir);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
  });

  it('copies a consistent, checked database while messages keep arriving, owner-only, and never overwrites a file', async () => {
    for (let i = 0; i < 200; i++) assert.equal(await send(i), 200);
    const target = join(mkdtempSync(join(tmpdir(), 'sb-backup-to-')), 'copy.db');
    // Ingest goes on during the copy: the backup must neither stall it nor come out torn.
    let sending = true;
    let sent = 200;
    const traffic = (async () => {
      while (sending) assert.equal(await send(sent++), 200);
    })();
    const done = await cliAsync(dataDir, 'backup', target);
    sending = false;
    await traffic;
    assert.equal(done.status, 0, done.stderr);
    assert.match(done.stdout, /^backed up to .*copy\.db: \d+ pages, schema version \d+, checked/m);
    assert.equal(statSync(target).mode & 0o777, 0o600);
    const copy = new DatabaseSync(target, { readOnly: true });
    const messages = Number((copy.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n);
    assert.equal((copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
    copy.close();
    assert.ok(messages >= 200 && messages <= sent, `${messages} messages copied, between the 200 sent before and the ${sent} sent by the end`);

    const again = cli(dataDir, 'backup', target);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /exists: backup never overwrites/);
    assert.match(cli(dataDir, 'backup').stderr, /backup takes one FILE/);
    assert.match(cli(join(dataDir, 'nope'), 'backup', join(dataDir, 'x.db')).stderr, /no database at/);
  });
});
