import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { hostname as machineName } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config/server-config.ts';
import { hostnameOf, isLoopbackAddress, isWildcardAddress, urlHost, type ConsoleAccess } from './console-access.ts';

export type ListenerSettings = Pick<ServerConfig, 'consoleHost' | 'tlsCert' | 'tlsKey' | 'publicOrigin'>;

/** How `serve` opens the console listener: where, with which certificate, answering to which names. */
export interface ConsoleListenerPlan {
  host: string;
  tls: { cert: Buffer; key: Buffer } | null;
  access: ConsoleAccess;
  /** The origin the printed console URL has, once the port is known. */
  originFor(port: number): string;
  /** Worth a line on stderr, not a refusal (a certificate past its date). */
  warnings: string[];
}

/** The one line `serve` says when asked to listen beyond this computer in plain HTTP. */
export function plainNetworkRefusal(host: string): string {
  return `the console would listen on ${host}, beyond this computer, in plain HTTP: add --tls-cert FILE --tls-key FILE (HTTPS), or --public-origin https://NAME when a TLS proxy is in front (or bind --console-host 127.0.0.1)`;
}

function readPem(file: string, dataDir: string, what: string, flag: string): Buffer {
  const path = isAbsolute(file) ? file : join(dataDir, file);
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`cannot read the TLS ${what} ${path} (${flag}): ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The certificate's subjectAltName entries as URL hostnames (DNS names lowercased, IPs canonical). */
export function certificateNames(cert: X509Certificate): string[] {
  const names: string[] = [];
  for (const entry of (cert.subjectAltName ?? '').split(/,\s*/)) {
    const dns = /^DNS:(.+)$/.exec(entry);
    const ip = /^IP Address:(.+)$/.exec(entry);
    if (dns) names.push(dns[1]!.toLowerCase());
    else if (ip) {
      const name = hostnameOf(urlHost(ip[1]!));
      if (name) names.push(name);
    }
  }
  return names;
}

function loadTls(settings: ListenerSettings, dataDir: string): { cert: Buffer; key: Buffer; x509: X509Certificate } {
  const cert = readPem(settings.tlsCert!, dataDir, 'certificate', '--tls-cert');
  const key = readPem(settings.tlsKey!, dataDir, 'key', '--tls-key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new ConfigError(`the TLS certificate ${settings.tlsCert} (--tls-cert) is not a PEM certificate: ${(error as Error).message}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new ConfigError(`the TLS certificate ${settings.tlsCert} and key ${settings.tlsKey} cannot be used together: ${(error as Error).message}`);
  }
  return { cert, key, x509 };
}

/**
 * Decides the listener from the settings, or refuses with one line (ConfigError): a non-loopback
 * bind needs TLS or a public origin, certificate and key must be readable and belong together.
 */
export function planConsoleListener(settings: ListenerSettings, dataDir: string, now = new Date()): ConsoleListenerPlan {
  const host = settings.consoleHost;
  const loopback = isLoopbackAddress(host);
  const publicOrigin = settings.publicOrigin ?? null;
  const hasTls = settings.tlsCert !== undefined && settings.tlsKey !== undefined;
  if (!loopback && !hasTls && publicOrigin === null) throw new ConfigError(plainNetworkRefusal(host));
  const bindName = isWildcardAddress(host) ? null : hostnameOf(urlHost(host));
  const warnings: string[] = [];
  if (!hasTls) {
    const access: ConsoleAccess = { scheme: 'http', names: [], loopback, publicOrigin };
    const printed = bindName ?? '127.0.0.1';
    return { host, tls: null, access, warnings, originFor: (port) => publicOrigin ?? new URL(`http://${printed}:${port}`).origin };
  }
  const { cert, key, x509 } = loadTls(settings, dataDir);
  if (new Date(x509.validTo) < now) warnings.push(`console: the TLS certificate ${settings.tlsCert} expired on ${x509.validTo}: browsers will refuse it`);
  const sans = certificateNames(x509);
  const names = [...new Set([...sans, ...(bindName && !loopback ? [bindName] : [])])];
  const access: ConsoleAccess = { scheme: 'https', names, loopback, publicOrigin };
  // The printed name is one the certificate covers, so the URL opens without a warning.
  const printed =
    (bindName && sans.includes(bindName) ? bindName : null) ??
    (loopback && sans.includes('localhost') ? 'localhost' : null) ??
    sans.find((n) => !n.startsWith('*.') && !n.startsWith('[') && !/^\d+(\.\d+){3}$/.test(n)) ??
    sans.find((n) => !n.startsWith('*.')) ??
    bindName ??
    machineName().toLowerCase();
  return { host, tls: { cert, key }, access, warnings, originFor: (port) => publicOrigin ?? new URL(`https://${printed}:${port}`).origin };
}
