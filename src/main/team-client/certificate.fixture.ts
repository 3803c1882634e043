import { spawnSync } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestCertificate {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
  /** SHA-256 of the certificate, colon hex: what a browser's certificate viewer shows. */
  fingerprint: string;
  /** base64 SHA-256 of the public key: Chromium's --ignore-certificate-errors-spki-list entry. */
  spki: string;
}

/** Why TLS tests cannot run here, or null: they need the openssl command. */
export function opensslMissing(): string | null {
  const probe = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return probe.status === 0 ? null : 'openssl is not installed: the TLS tests make their throwaway certificate with it';
}

/**
 * A throwaway self-signed certificate (P-256, two days) for `names`, e.g. ['DNS:localhost',
 * 'IP:127.0.0.1'], made with openssl in a temp folder as an operator would make one.
 */
export function makeCertificate(names: string[] = ['DNS:localhost', 'IP:127.0.0.1'], cn = 'localhost'): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'sb-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${cn}`, '-addext', `subjectAltName=${names.join(',')}`],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  const cert = readFileSync(certFile, 'utf8');
  const x509 = new X509Certificate(cert);
  const spki = createHash('sha256').update(x509.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
  return { dir, certFile, keyFile, cert, key: readFileSync(keyFile, 'utf8'), fingerprint: x509.fingerprint256, spki };
}

/** An HTTPS server on 127.0.0.1, port 0, with `cert`: the far end of the desktop's checks. */
export async function startTlsServer(cert: TestCertificate, handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok')): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer({ cert: cert.cert, key: cert.key }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
