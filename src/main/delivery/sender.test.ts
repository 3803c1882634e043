import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createSender, type AddressGuard } from './sender.ts';

/** A bare TCP listener on 127.0.0.1 that counts connections and every byte that reaches it. */
async function tcpListener(): Promise<{ port: number; connections: number; bytes: number; close(): Promise<void> }> {
  const state = { connections: 0, bytes: 0 };
  const server: TcpServer = createTcpServer((socket) => {
    state.connections++;
    socket.on('data', (chunk: Buffer) => (state.bytes += chunk.length));
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return Object.assign(state, {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

const loopback: AddressGuard = (address) => /^(::ffff:)?127\./i.test(address);
const delivery = (url: string) => ({ url, body: '{"hello":"world"}', idempotencyKey: 'k-1' });

describe('sender: the connect-time SSRF guard', () => {
  let tcp: Awaited<ReturnType<typeof tcpListener>>;
  before(async () => (tcp = await tcpListener()));
  after(() => tcp.close());

  // Node does not call `lookup` for IP literals: only the check on the connected socket sees them.
  for (const [what, url] of [
    ['an IPv4 literal', (p: number) => `http://127.0.0.1:${p}/hook`],
    ['an IPv4-mapped IPv6 literal', (p: number) => `http://[::ffff:7f00:1]:${p}/hook`],
    ['an IPv4 literal over https (no TLS handshake either)', (p: number) => `https://127.0.0.1:${p}/hook`],
  ] as const) {
    it(`refuses ${what} whose connected address is forbidden, before writing a byte`, async () => {
      const sender = createSender({ timeoutMs: 2000, isForbidden: loopback });
      const before = { connections: tcp.connections, bytes: tcp.bytes };
      const result = await sender(delivery(url(tcp.port)));
      sender.close();
      assert.equal(result.kind, 'error');
      assert.ok(result.kind === 'error' && result.permanent, 'a forbidden address is a permanent failure');
      assert.match(result.kind === 'error' ? result.error : '', /connected to (::ffff:)?127\.0\.0\.1, a link-local or metadata address/);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(tcp.connections, before.connections + 1, 'the TCP connection was made: the check is on the address actually connected to');
      assert.equal(tcp.bytes, before.bytes, 'not one byte of the request reached the listener');
    });
  }

  it('refuses a name whose resolved address is forbidden, without connecting', async () => {
    const sender = createSender({ timeoutMs: 2000, isForbidden: loopback, resolve: (_h, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) });
    const before = tcp.connections;
    const result = await sender(delivery(`http://hooks.attacker.test:${tcp.port}/hook`));
    sender.close();
    assert.deepEqual(result, { kind: 'error', error: 'hooks.attacker.test resolves to 127.0.0.1, a link-local or metadata address', permanent: true });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(tcp.connections, before);
  });
});

describe('sender: a kept-alive socket is checked again before it is reused', () => {
  let server: HttpServer;
  let requests = 0;
  let connections = 0;
  let base = '';
  before(async () => {
    server = createHttpServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    server.on('connection', () => connections++);
    server.keepAliveTimeout = 5000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('sends while allowed, then refuses on the pooled socket once the guard says no', async () => {
    let forbid = false;
    const sender = createSender({ timeoutMs: 2000, isForbidden: (a) => forbid && loopback(a) });
    assert.deepEqual(await sender(delivery(`${base}/hook`)), { kind: 'response', status: 200, retryAfter: null });
    assert.deepEqual(await sender(delivery(`${base}/hook`)), { kind: 'response', status: 200, retryAfter: null });
    assert.equal(requests, 2);
    assert.equal(connections, 1, 'the second delivery reused the kept-alive socket');
    forbid = true;
    const refused = await sender(delivery(`${base}/hook`));
    sender.close();
    assert.ok(refused.kind === 'error' && refused.permanent, JSON.stringify(refused));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(requests, 2, 'the receiver saw no third request');
    assert.equal(connections, 1, 'the refusal was on the pooled socket, not a new one');
  });
});

describe('sender: the default guard', () => {
  it('delivers to loopback receivers (only link-local and metadata are refused)', async () => {
    const server = createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const sender = createSender({ timeoutMs: 2000 });
    try {
      for (const host of ['127.0.0.1', '[::ffff:7f00:1]']) {
        assert.deepEqual(await sender(delivery(`http://${host}:${port}/hook`)), { kind: 'response', status: 204, retryAfter: null }, host);
      }
    } finally {
      sender.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses link-local and metadata literals in every spelling without a connection attempt', async () => {
    const sender = createSender({ timeoutMs: 2000 });
    for (const url of ['http://[::ffff:a9fe:a9fe]/', 'http://[::a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://0xa9fea9fe/', 'http://[fe80::1]/']) {
      const result = await sender(delivery(url));
      assert.ok(result.kind === 'error' && result.permanent && /link-local or metadata/.test(result.error), `${url}: ${JSON.stringify(result)}`);
    }
    sender.close();
  });
});
