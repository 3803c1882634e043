import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { makeCertificate, opensslMissing, type TestCertificate } from './helpers/tls-cert.ts';
import { signBody } from './helpers/sign.ts';
import { MAIN_V8_FLAGS } from '../src/main/runtime-flags.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const noOpenssl = opensslMissing();

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to the listener at `base`, trusting `ca`; Host and other headers as given. */
function call(base: string, path: string, options: { ca?: string; headers?: Record<string, string>; method?: string; body?: string; servername?: string } = {}): Promise<Answer> {
  const url = new URL(path, base);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: options.method ?? 'GET', headers: options.headers, ca: options.ca, servername: options.servername ?? url.hostname }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const api = (base: string, method: string, token: string, extra: { ca?: string; headers?: Record<string, string> } = {}): Promise<Answer> =>
  call(base, `/api/${method}`, { ca: extra.ca, method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...extra.headers } });

/** `serve` that is expected to refuse: its exit status and what it said on stderr. */
function serveRefuses(dataDir: string, ...args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [...MAIN_V8_FLAGS, 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('team server: the console listener on the network (section 9)', { skip: noOpenssl ?? false }, () => {
  const started: ServeProcess[] = [];
  let cert: TestCertificate;
  let tls: ServeProcess;
  let dataDir: string;
  let secret: string;
  before(async () => {
    cert = makeCertificate(['DNS:localhost', 'DNS:team.test', 'IP:127.0.0.1']);
    dataDir = mkdtempSync(join(tmpdir(), 'sb-team-net-'));
    secret = secretFrom(cli(dataDir, 'clients', 'add', 'acme').stdout);
    tls = await spawnServe(dataDir, ['--console-host', '0.0.0.0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile]);
    started.push(tls);
  });
  after(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
    await Promise.all(started.map((s) => s.exit()));
  });

  it('binds 0.0.0.0 with TLS and prints an https URL on a name its certificate covers', () => {
    assert.match(tls.console, /^https:\/\/localhost:\d+\/#token=[A-Za-z0-9_-]{43}$/);
  });

  it('the API answers over HTTPS with the printed token, and refuses without it', async () => {
    const ok = await api(tls.consoleBase, 'status', tls.consoleToken, { ca: cert.cert });
    assert.equal(ok.status, 200, ok.body);
    assert.equal((JSON.parse(ok.body) as { ok: boolean }).ok, true);
    assert.equal((await api(tls.consoleBase, 'status', 'wrong', { ca: cert.cert })).status, 401);
  });

  it('the event stream runs over TLS and delivers an event', async () => {
    const events = httpsRequest(new URL('/api/events', tls.consoleBase), { ca: cert.cert, headers: { authorization: `Bearer ${tls.consoleToken}` } });
    events.end();
    const [res] = (await once(events, 'response')) as [import('node:http').IncomingMessage];
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    let seen = '';
    const arrived = new Promise<string>((resolve) => {
      res.on('data', (c: Buffer) => {
        seen += c.toString();
        const m = /^data: (.*)$/m.exec(seen);
        if (m) resolve(m[1]!);
      });
    });
    await once(res, 'data'); // ": connected": subscribed before the message is sent
    const info = { event_type: 'website_dialog', msg_id: 'tls-1', from_user_id: 'visitor', content: 'hello over TLS?' };
    const sent = await fetch(tls.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody('acme', secret, info, Math.floor(Date.now() / 1000))) });
    assert.equal(sent.status, 200, await sent.text());
    const event = JSON.parse(await arrived) as { type: string };
    assert.equal(event.type, 'conversation');
    res.destroy();
  });

  it('accepts the certificate\'s names as Host and its own https origin as Origin; refuses the rest as in v1.1', async () => {
    const auth = { ca: cert.cert };
    const withHeaders = (headers: Record<string, string>) => api(tls.consoleBase, 'status', tls.consoleToken, { ...auth, headers });
    const port = new URL(tls.consoleBase).port;
    assert.equal((await withHeaders({ host: `team.test:${port}`, origin: `https://team.test:${port}` })).status, 200, 'a name on the certificate, from its own page');
    assert.equal((await withHeaders({ host: `localhost:${port}`, origin: `https://localhost:${port}`, 'sec-fetch-site': 'same-origin' })).status, 200);
    const foreignHost = await withHeaders({ host: `attacker.example:${port}` });
    assert.equal(foreignHost.status, 421, 'DNS rebinding: a name the certificate does not cover');
    assert.match(foreignHost.body, /team\.test/);
    assert.equal((await withHeaders({ host: `127.0.0.1:${port}` })).status, 200, 'the certificate covers IP 127.0.0.1');
    assert.equal((await withHeaders({ host: `[::1]:${port}` })).status, 421, 'bound to every interface: loopback names are not the team server\'s');
    assert.equal((await withHeaders({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status, 403, 'the plain-http origin is another origin');
    assert.equal((await withHeaders({ host: `localhost:${port}`, origin: 'https://attacker.example' })).status, 403);
    assert.equal((await withHeaders({ host: `localhost:${port}`, 'sec-fetch-site': 'cross-site' })).status, 403);
    // CSRF rules as in v1.1: a state change still needs JSON.
    const form = await call(tls.consoleBase, '/api/status', { ...auth, method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${tls.consoleToken}` } });
    assert.equal(form.status, 415);
  });

  it('plain HTTP sent to the TLS port is dropped at once; the listener keeps serving', async () => {
    const port = Number(new URL(tls.consoleBase).port);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => {});
    socket.end(`GET /api/status HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`);
    let reply = '';
    socket.on('data', (c: Buffer) => (reply += c.toString('latin1')));
    await once(socket, 'close');
    assert.doesNotMatch(reply, /^HTTP\/1\.1 200/);
    assert.equal((await api(tls.consoleBase, 'status', tls.consoleToken, { ca: cert.cert })).status, 200);
    assert.equal(tls.child.exitCode, null, 'still running');
  });

  it('a loopback bind with TLS still answers to loopback names', async () => {
    const s = await spawnServe(mkdtempSync(join(tmpdir(), 'sb-team-lo-')), ['--console-host', '127.0.0.1', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile]);
    started.push(s);
    assert.match(s.console, /^https:\/\/127\.0\.0\.1:\d+\/#token=/, 'the bind address is on the certificate');
    const port = new URL(s.consoleBase).port;
    assert.equal((await api(s.consoleBase, 'status', s.consoleToken, { ca: cert.cert, headers: { host: `[::1]:${port}` } })).status, 200);
    assert.equal((await api(s.consoleBase, 'status', s.consoleToken, { ca: cert.cert, headers: { host: 'evil.example' } })).status, 421);
  });

  it('--public-origin: a plain listener behind a TLS proxy, the proxy\'s origin printed and accepted', async () => {
    const s = await spawnServe(mkdtempSync(join(tmpdir(), 'sb-team-proxy-')), ['--console-host', '0.0.0.0', '--public-origin', 'https://support.team.test']);
    started.push(s);
    assert.match(s.console, /^https:\/\/support\.team\.test\/#token=[A-Za-z0-9_-]{43}$/);
    assert.match(s.listener ?? '', /^http:\/\/0\.0\.0\.0:\d+$/);
    const base = s.listener!.replace('0.0.0.0', '127.0.0.1') + '/';
    // What a proxy forwards: the public Host (nginx: proxy_set_header Host $host) and the browser's Origin.
    const viaProxy = await api(base, 'status', s.consoleToken, { headers: { host: 'support.team.test', origin: 'https://support.team.test', 'sec-fetch-site': 'same-origin' } });
    assert.equal(viaProxy.status, 200, viaProxy.body);
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { host: 'support.team.test', origin: 'http://support.team.test' } })).status, 403);
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { host: 'support.team.test', origin: 'https://evil.test' } })).status, 403);
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { host: 'evil.test' } })).status, 421);
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { host: `127.0.0.1:${new URL(base).port}` } })).status, 421, 'not bound to loopback: loopback names are not accepted');
  });

  it('--public-origin with a loopback bind (proxy on the same machine) also keeps loopback names', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sb-team-proxy-lo-'));
    writeFileSync(join(d, 'config.json'), JSON.stringify({ publicOrigin: 'https://desk.team.test:8443' }));
    const s = await spawnServe(d);
    started.push(s);
    assert.match(s.console, /^https:\/\/desk\.team\.test:8443\/#token=/, 'from config.json, like every serve setting');
    const base = s.listener! + '/';
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { host: `127.0.0.1:${new URL(base).port}`, origin: 'https://desk.team.test:8443' } })).status, 200, 'nginx\'s default Host is the upstream\'s');
    assert.equal((await api(base, 'status', s.consoleToken, { headers: { origin: 'https://desk.team.test' } })).status, 403, 'another port is another origin');
  });

  it('a non-loopback bind in plain HTTP refuses to start with one line saying what to add', () => {
    const r = serveRefuses(mkdtempSync(join(tmpdir(), 'sb-team-no-')), '--console-host', '0.0.0.0');
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '', 'nothing started, nothing printed');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^switchboard: the console would listen on 0\.0\.0\.0, beyond this computer, in plain HTTP: add --tls-cert FILE --tls-key FILE \(HTTPS\), or --public-origin https:\/\/NAME when a TLS proxy is in front/);
    const file = mkdtempSync(join(tmpdir(), 'sb-team-no-file-'));
    writeFileSync(join(file, 'config.json'), JSON.stringify({ consoleHost: '10.1.2.3' }));
    assert.match(serveRefuses(file).stderr, /^switchboard: the console would listen on 10\.1\.2\.3, beyond this computer, in plain HTTP: add --tls-cert/);
  });

  it('bad certificate settings are one clear line each', () => {
    const d = mkdtempSync(join(tmpdir(), 'sb-team-bad-'));
    const oneLine = (r: { status: number | null; stderr: string }, pattern: RegExp): void => {
      assert.equal(r.status, 1);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, pattern);
    };
    oneLine(serveRefuses(d, '--console-host', '0.0.0.0', '--tls-cert', '/nonexistent/cert.pem', '--tls-key', cert.keyFile), /^switchboard: cannot read the TLS certificate \/nonexistent\/cert\.pem \(--tls-cert\): ENOENT/);
    oneLine(serveRefuses(d, '--console-host', '0.0.0.0', '--tls-cert', cert.certFile, '--tls-key', '/nonexistent/key.pem'), /^switchboard: cannot read the TLS key \/nonexistent\/key\.pem \(--tls-key\): ENOENT/);
    oneLine(serveRefuses(d, '--console-host', '0.0.0.0', '--tls-cert', cert.keyFile, '--tls-key', cert.keyFile), /^switchboard: the TLS certificate .*key\.pem \(--tls-cert\) is not a PEM certificate/);
    const other = makeCertificate();
    oneLine(serveRefuses(d, '--console-host', '0.0.0.0', '--tls-cert', cert.certFile, '--tls-key', other.keyFile), /^switchboard: the TLS certificate .* and key .* cannot be used together: .*key values mismatch/);
    oneLine(serveRefuses(d, '--console-host', '0.0.0.0', '--tls-cert', cert.certFile), /^switchboard: invalid configuration .*tlsCert: give both the certificate \(tlsCert, --tls-cert\) and its key/);
    oneLine(serveRefuses(d, '--public-origin', 'http://team.test'), /^switchboard: invalid configuration .*publicOrigin: must start with https:\/\//);
    oneLine(serveRefuses(d, '--public-origin', 'https://team.test/console'), /publicOrigin: must be an origin only/);
  });
});
