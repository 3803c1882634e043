import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { eventually } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { cli, cliAsync } from './helpers/processes.ts';
import { createConsoleServer } from '../src/main/console-api/console-server.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';
import { consoleTokenAtStart } from '../src/main/console-api/console-token.ts';
import type { ApiResult } from '../src/shared/console-api.ts';

/** send_url spellings of link-local and metadata targets that the URL parser rewrites before any check sees them. */
const BAD_URLS = [
  'http://169.254.169.254/latest/meta-data',
  'http://2852039166/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  'http://169.254.43518/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::FFFF:A9FE:A9FE]/',
  'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
  'http://[::169.254.169.254]/',
  'http://[::a9fe:a9fe]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[::ffff:6464:64c8]/',
  'http://[fe80::1]/',
  'https://[fd00:ec2::254]/',
  'http://METADATA.GOOGLE.INTERNAL./',
];
/** The CLI is a process per call: a sample of the spellings above, one of each kind. */
const CLI_SAMPLE = ['http://[::ffff:a9fe:a9fe]/', 'http://[::a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://0xa9fea9fe/', 'http://[fe80::1]/'];

const message = (extra: Record<string, unknown> = {}) => ({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content: 'hello', ...extra });

describe('SSRF: link-local and metadata send_urls are refused in every spelling, at every entry', () => {
  let h: Harness;
  let server: Server;
  let consoleBase: string;
  let token: string;
  const call = async <T>(method: string, input: unknown): Promise<ApiResult<T>> => {
    const r = await fetch(`${consoleBase}/api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
    return (await r.json()) as ApiResult<T>;
  };

  before(async () => {
    h = await startHarness({
      engine: scriptedEngine().engine,
      config: { deliveryTimeoutMs: 300 },
      // The resolver an attacker controls: names answering with IPv4-mapped, compatible and NAT64 spellings of 169.254.169.254.
      resolve: (host, cb) => {
        const to = { 'mapped.attacker.test': '::ffff:a9fe:a9fe', 'compat.attacker.test': '::a9fe:a9fe', 'nat64.attacker.test': '64:ff9b::a9fe:a9fe', 'zone.attacker.test': 'fe80::1%eth0' }[host];
        cb(null, [{ address: to ?? '127.0.0.1', family: to ? 6 : 4 }]);
      },
    });
    h.addClient('acme');
    token = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    server = createConsoleServer({ rendererDir: '/nonexistent', accounts: h.service.console.accounts, handlers: h.service.console.handlers, events: h.service.console.events });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    consoleBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
  });

  it("a message's send_url: 400 send_url_not_allowed", async () => {
    for (const url of BAD_URLS) {
      const r = await h.post(message({ send_url: url }));
      assert.equal(r.status, 400, url);
      assert.equal(r.body.code, 'send_url_not_allowed', url);
    }
    assert.equal((await h.post(message({ send_url: 'http://[::ffff:7f00:1]:9/hook' }))).status, 200, 'the loopback twin stays allowed');
  });

  it('the console API refuses them as a client setting, on add and on update', async () => {
    const added = await call<{ secret: string }>('addClient', { id: 'console-client', settings: {} });
    assert.ok(added.ok);
    for (const url of BAD_URLS) {
      const updated = await call('updateClientSettings', { id: 'console-client', settings: { sendUrl: url } });
      assert.deepEqual(updated.ok ? 'accepted' : [updated.error.code, updated.error.message], ['invalid_input', `Default send_url "${url}": must not point at a link-local or cloud metadata address`], url);
      const created = await call('addClient', { id: 'c-other', settings: { sendUrl: url } });
      assert.equal(created.ok ? 'accepted' : created.error.code, 'invalid_input', url);
    }
    assert.equal(h.admin.clients.get('console-client')?.settings.sendUrl, undefined, 'nothing was stored');
    assert.equal(h.admin.clients.get('c-other'), undefined);
  });

  it('a send_url stored before the check existed is refused at delivery time: dead at once, saying why', async () => {
    // Written straight into the store, as an older version would have accepted it.
    for (const [id, url] of [
      ['old-mapped', 'http://[::ffff:a9fe:a9fe]/hook'],
      ['old-nat64', 'http://[64:ff9b::a9fe:a9fe]/hook'],
    ] as const) {
      h.addClient(id, { sendUrl: url });
      await h.post(message(), { client: id });
      h.clock.advance(2000);
      const d = await eventually(() => h.admin.deliveries.list(undefined, 50).find((x) => x.clientId === id && x.state === 'dead'), `${id} dead`);
      assert.equal(d.attempts, 1, 'not retried');
      assert.match(d.lastError ?? '', /link-local or metadata address/);
    }
  });

  it('a name resolving to a mapped, compatible, NAT64 or zoned link-local address is refused at connect time', async () => {
    for (const name of ['mapped', 'compat', 'nat64', 'zone']) {
      const id = `dns-${name}`;
      h.addClient(id, { sendUrl: `http://${name}.attacker.test:9/hook` });
      await h.post(message(), { client: id });
      h.clock.advance(2000);
      const d = await eventually(() => h.admin.deliveries.list(undefined, 50).find((x) => x.clientId === id && x.state === 'dead'), `${id} dead`);
      assert.equal(d.attempts, 1);
      assert.match(d.lastError ?? '', new RegExp(`${name}\\.attacker\\.test resolves to .+, a link-local or metadata address`));
    }
  });
});

describe('SSRF: clients set --send-url', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-ssrf-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses every spelling with a one-line error naming the flag, exit 2, and keeps the stored URL', async () => {
    assert.equal(cli(dir, 'clients', 'add', 'acme', '--send-url', 'https://hooks.example.com/in').status, 0);
    const results = await Promise.all(CLI_SAMPLE.map((url) => cliAsync(dir, 'clients', 'set', 'acme', '--send-url', url)));
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 2, `${CLI_SAMPLE[i]}: ${r.stderr}`);
      assert.match(r.stderr.split('\n')[0]!, /^error: --send-url must be an absolute http\(s\) URL that is not link-local or metadata, got "/);
    }
    assert.match(cli(dir, 'clients', 'show', 'acme').stdout, /https:\/\/hooks\.example\.com\/in/);
    assert.equal(cli(dir, 'clients', 'set', 'acme', '--send-url', 'http://[::ffff:7f00:1]:8080/hook').status, 0, 'loopback stays allowed');
  });
});
