import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { makeCertificate, opensslMissing, startTlsServer, type TestCertificate } from './certificate.fixture.ts';
import { createTeamClient } from './team-client.ts';
import { VERIFY_ACCEPT, VERIFY_REFUSE } from './certificate-decision.ts';
import type { SessionKeychain } from './session-store.ts';

const noOpenssl = opensslMissing();

/** Reversible but not plain: enough to see what the client hands the keychain. */
const keychain = (available = true): SessionKeychain => ({
  isEncryptionAvailable: () => available,
  encryptString: (s) => Buffer.from(s, 'utf8').reverse(),
  decryptString: (b) => Buffer.from(b).reverse().toString('utf8'),
});

describe('connecting the desktop to a team server (main-process logic, no Electron)', { skip: noOpenssl ?? false }, () => {
  let cert: TestCertificate;
  let other: TestCertificate;
  let server: { port: number; close(): Promise<void> };
  let impostor: { port: number; close(): Promise<void> };
  const seen: Array<{ path: string; auth: string | undefined }> = [];
  const record = (req: IncomingMessage, res: import('node:http').ServerResponse): void => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true,"value":{"signedOut":true}}');
  };
  before(async () => {
    cert = makeCertificate(['DNS:localhost', 'IP:127.0.0.1']);
    other = makeCertificate(['DNS:localhost', 'IP:127.0.0.1']);
    server = await startTlsServer(cert, record);
    impostor = await startTlsServer(other, record);
  });
  after(async () => {
    await server.close();
    await impostor.close();
  });
  const newClient = (ca?: string[], available = true) => createTeamClient({ dataDir: mkdtempSync(join(tmpdir(), 'sb-team-client-')), keychain: keychain(available), probe: ca ? { ca } : undefined });

  it('a self-signed server: shown with its fingerprint, connected only once that is confirmed, then pinned', async () => {
    const client = newClient();
    const url = `https://127.0.0.1:${server.port}`;
    const probe = await client.probe(url);
    assert.ok(probe.ok);
    assert.equal(probe.value.trust, 'unverified');
    assert.equal(probe.value.fingerprint, cert.fingerprint);
    assert.equal(probe.value.selfSigned, true);
    const unconfirmed = await client.connect(url, null);
    assert.equal(unconfirmed.ok ? '' : unconfirmed.error.code, 'confirm_fingerprint');
    assert.equal(client.activeServer(), null, 'nothing remembered before the user confirmed');
    const wrong = await client.connect(url, other.fingerprint);
    assert.equal(wrong.ok ? '' : wrong.error.code, 'fingerprint_mismatch');
    const connected = await client.connect(url, cert.fingerprint.toLowerCase());
    assert.deepEqual(connected, { ok: true, value: { origin: url, url: `${url}/` } });
    assert.equal(client.activeServer(), url);
    const again = await client.probe(url);
    assert.equal(again.ok && again.value.trust, 'pinned');
    assert.equal(client.verdict('127.0.0.1', cert.fingerprint, false).result, VERIFY_ACCEPT, 'the window\'s session accepts it now');
    client.useThisComputer();
    assert.equal(client.activeServer(), null, 'back to this computer: nothing opens the server at start');
  });

  it('a changed certificate for a pinned host is refused, naming both fingerprints, until forgotten on purpose', async () => {
    const client = newClient();
    await client.connect(`https://127.0.0.1:${server.port}`, cert.fingerprint);
    const url = `https://127.0.0.1:${impostor.port}`;
    const probe = await client.probe(url);
    assert.equal(probe.ok && probe.value.trust, 'changed');
    assert.equal(probe.ok && probe.value.pinned, cert.fingerprint);
    const refused = await client.connect(url, other.fingerprint);
    assert.equal(refused.ok ? '' : refused.error.code, 'certificate_changed');
    assert.ok(!refused.ok && refused.error.message.includes(cert.fingerprint) && refused.error.message.includes(other.fingerprint), 'both fingerprints named');
    const verdict = client.verdict('127.0.0.1', other.fingerprint, false);
    assert.equal(verdict.result, VERIFY_REFUSE);
    assert.deepEqual(await client.forget(url), { ok: true, value: { forgotten: true } });
    const fresh = await client.probe(url);
    assert.equal(fresh.ok && fresh.value.trust, 'unverified', 'asked like a new server again');
  });

  it('a publicly trusted server connects without a question and without a pin', async () => {
    const client = newClient([cert.cert]);
    const url = `https://localhost:${server.port}`;
    const probe = await client.probe(url);
    assert.equal(probe.ok && probe.value.trust, 'public');
    assert.equal(probe.ok && probe.value.problem, null);
    assert.ok((await client.connect(url, null)).ok);
    assert.equal(client.verdict('localhost', cert.fingerprint, true).result, -3, 'Chromium\'s own verdict');
  });

  it('sign-out ends the kept session on the server over a verified connection, then forgets it', async () => {
    const client = newClient();
    const origin = `https://127.0.0.1:${server.port}`;
    await client.connect(origin, cert.fingerprint);
    assert.deepEqual(await client.saveSession(origin, 'tok-123'), { ok: true, value: { remembered: true } });
    assert.equal(client.loadSession(origin), 'tok-123');
    seen.length = 0;
    assert.deepEqual(await client.signOut(origin), { ok: true, value: { signedOut: true } });
    assert.deepEqual(seen, [{ path: '/api/signOut', auth: 'Bearer tok-123' }]);
    assert.equal(client.loadSession(origin), null);
  });

  it('sign-out never sends the token to a server whose certificate changed', async () => {
    const client = newClient();
    await client.connect(`https://127.0.0.1:${server.port}`, cert.fingerprint);
    const origin = `https://127.0.0.1:${impostor.port}`;
    await client.saveSession(origin, 'tok-secret');
    seen.length = 0;
    const out = await client.signOut(origin);
    assert.equal(out.ok ? '' : out.error.code, 'certificate_refused');
    assert.deepEqual(seen, [], 'nothing reached the impostor');
    assert.equal(client.loadSession(origin), null, 'forgotten here all the same');
  });

  it('without encryption the session is not remembered, and the answer says so', async () => {
    const client = newClient(undefined, false);
    const saved = await client.saveSession(`https://127.0.0.1:${server.port}`, 'tok');
    assert.equal(saved.ok ? '' : saved.error.code, 'encryption_unavailable');
  });
});
