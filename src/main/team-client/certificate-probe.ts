import { connect, getCACertificates, type TLSSocket } from 'node:tls';
import { isIP } from 'node:net';
import { TeamClientError } from './team-client-error.ts';
import type { TeamServerAddress } from './team-url.ts';

/** What the server's certificate is, seen on a real TLS connection. */
export interface CertificateFacts {
  fingerprint: string;
  /** Valid for this name, chained to one of the trusted authorities. */
  publiclyTrusted: boolean;
  /** Why not (Node's code: DEPTH_ZERO_SELF_SIGNED_CERT, ERR_TLS_CERT_ALTNAME_INVALID, CERT_HAS_EXPIRED…), or null. */
  problem: string | null;
  selfSigned: boolean;
  subject: string;
  validTo: string;
}

export interface ProbeOptions {
  /** Trusted authorities (PEM); default: Node's bundled ones and this computer's (the system store). */
  ca?: string[];
  timeoutMs?: number;
}

export const PROBE_TIMEOUT_MS = 10_000;

/** Node's bundled authorities plus the operating system's: what "publicly trusted" means here. */
export function systemAuthorities(): string[] {
  const bundled = getCACertificates('bundled');
  try {
    return [...new Set([...bundled, ...getCACertificates('system')])];
  } catch {
    return bundled;
  }
}

function failure(address: TeamServerAddress, error: NodeJS.ErrnoException): TeamClientError {
  const where = `${address.host}:${address.port}`;
  const code = error.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new TeamClientError('unreachable', `no computer is called ${address.host} (${code}): check the address`);
  if (code === 'ECONNREFUSED') return new TeamClientError('unreachable', `nothing answers at ${where} (connection refused): is the team server running, and is this its console port?`);
  if (code === 'ETIMEDOUT' || code === 'probe_timeout') return new TeamClientError('unreachable', `${where} did not answer within ${PROBE_TIMEOUT_MS / 1000} s`);
  if (/SSL|TLS|EPROTO|ECONNRESET/.test(code) || /wrong version number|packet length too long|http request/i.test(error.message)) {
    return new TeamClientError('not_tls', `${where} does not answer in TLS (https): the team server needs --tls-cert and --tls-key, or a TLS proxy in front (${code || error.message})`);
  }
  return new TeamClientError('unreachable', `cannot reach ${where}: ${error.message}`);
}

/**
 * A TLS connection to the server that verifies nothing by itself: the caller decides from the facts
 * (certificate-decision.ts) before a single byte of its own is written.
 */
export function openTls(address: TeamServerAddress, options: ProbeOptions = {}): Promise<{ socket: TLSSocket; facts: CertificateFacts }> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: address.host,
      port: address.port,
      // SNI carries a name, never an address.
      servername: isIP(address.host) ? undefined : address.host,
      ca: options.ca ?? systemAuthorities(),
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('timed out'), { code: 'probe_timeout' })), timeoutMs);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(failure(address, error));
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = socket.getPeerCertificate(true);
      if (!cert || !cert.fingerprint256) {
        socket.destroy();
        return reject(new TeamClientError('not_tls', `${address.host}:${address.port} showed no certificate`));
      }
      const problem = socket.authorized ? null : String(socket.authorizationError ?? 'UNTRUSTED');
      resolve({
        socket,
        facts: {
          fingerprint: cert.fingerprint256,
          publiclyTrusted: socket.authorized,
          problem,
          selfSigned: cert.issuerCertificate === undefined || cert.issuerCertificate.fingerprint256 === cert.fingerprint256,
          subject: String(cert.subject?.CN ?? ''),
          validTo: cert.valid_to,
        },
      });
    });
  });
}

/** Connects, reads the certificate, hangs up. */
export async function probeCertificate(address: TeamServerAddress, options: ProbeOptions = {}): Promise<CertificateFacts> {
  const { socket, facts } = await openTls(address, options);
  socket.destroy();
  return facts;
}
