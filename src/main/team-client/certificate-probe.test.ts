import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeCertificate, opensslMissing, startTlsServer, type TestCertificate } from './certificate.fixture.ts';
import { probeCertificate } from './certificate-probe.ts';
import { parseTeamServerUrl } from './team-url.ts';
import { TeamClientError } from './team-client-error.ts';

const noOpenssl = opensslMissing();

describe('checking a team server\'s certificate on a real TLS connection', { skip: noOpenssl ?? false }, () => {
  let cert: TestCertificate;
  let server: { port: number; close(): Promise<void> };
  before(async () => {
    cert = makeCertificate(['DNS:localhost', 'IP:127.0.0.1']);
    server = await startTlsServer(cert);
  });
  after(() => server.close());

  it('reads the SHA-256 fingerprint as browsers show it (what openssl prints too)', async () => {
    const facts = await probeCertificate(parseTeamServerUrl(`https://127.0.0.1:${server.port}`));
    const printed = spawnSync('openssl', ['x509', '-in', cert.certFile, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }).stdout;
    assert.equal(`sha256 Fingerprint=${facts.fingerprint}`, printed.trim());
    assert.match(facts.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('a self-signed certificate is not publicly trusted, and says why', async () => {
    const facts = await probeCertificate(parseTeamServerUrl(`localhost:${server.port}`));
    assert.equal(facts.publiclyTrusted, false);
    assert.equal(facts.selfSigned, true);
    assert.equal(facts.problem, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(facts.subject, 'localhost');
  });

  it('trusted when it chains to a known authority and names the host; not when the name differs', async () => {
    const trusted = await probeCertificate(parseTeamServerUrl(`https://localhost:${server.port}`), { ca: [cert.cert] });
    assert.equal(trusted.publiclyTrusted, true);
    assert.equal(trusted.problem, null);
    const other = makeCertificate(['DNS:elsewhere.test'], 'elsewhere.test');
    const elsewhere = await startTlsServer(other);
    try {
      const wrongName = await probeCertificate(parseTeamServerUrl(`https://localhost:${elsewhere.port}`), { ca: [other.cert] });
      assert.equal(wrongName.publiclyTrusted, false);
      assert.equal(wrongName.problem, 'ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      await elsewhere.close();
    }
  });

  it('a plain-HTTP server, a closed port and an unknown name are each a clear refusal', async () => {
    const plain = createServer((_req, res) => res.end('hello'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const port = (plain.address() as AddressInfo).port;
    await assert.rejects(probeCertificate(parseTeamServerUrl(`https://127.0.0.1:${port}`)), (e: Error) => e instanceof TeamClientError && e.code === 'not_tls' && /does not answer in TLS/.test(e.message));
    plain.close();
    await assert.rejects(probeCertificate(parseTeamServerUrl(`https://127.0.0.1:${port}`)), (e: Error) => e instanceof TeamClientError && e.code === 'unreachable' && /connection refused/.test(e.message));
    await assert.rejects(probeCertificate(parseTeamServerUrl('https://no-such-host.invalid')), (e: Error) => e instanceof TeamClientError && e.code === 'unreachable' && /no computer is called/.test(e.message));
  });
});

describe('the address the user types', () => {
  it('https is assumed, kept with its port and fragment; plain http is refused', () => {
    assert.deepEqual(parseTeamServerUrl(' team.example:8788 '), { origin: 'https://team.example:8788', host: 'team.example', port: 8788, url: 'https://team.example:8788/' });
    assert.equal(parseTeamServerUrl('https://Team.Example/#token=abc').url, 'https://team.example/#token=abc');
    assert.equal(parseTeamServerUrl('https://[::1]:9000').host, '::1');
    assert.equal(parseTeamServerUrl('https://team.example?token=x').url, 'https://team.example/', 'a query never carries a secret along');
    assert.throws(() => parseTeamServerUrl('http://team.example'), /over https:\/\/ only/);
    assert.throws(() => parseTeamServerUrl('https://ann:pw@team.example'), /user name or password/);
    assert.throws(() => parseTeamServerUrl('https://'), /is not an address/);
  });
});
