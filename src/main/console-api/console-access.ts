import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which names and origins the console listener answers to (protocol section 9, team mode). A
 * loopback listener answers to loopback names, as in v1.1; a team server also to the names of its
 * certificate (or its bind address), and to the public origin of a TLS proxy in front of it.
 */
export interface ConsoleAccess {
  /** The listener's own scheme: what a page loaded straight from it has as its origin. */
  scheme: 'http' | 'https';
  /** Host names as URL.hostname spells them (lowercase, IPv6 in brackets); `*.example.com` covers one label. */
  names: readonly string[];
  /** Loopback names (127.0.0.1, localhost, [::1]) are accepted too: the listener is bound to loopback. */
  loopback: boolean;
  /** `https://name[:port]` of the TLS proxy in front, or null. */
  publicOrigin: string | null;
}

/** The v1.1 listener: plain HTTP on 127.0.0.1, loopback names only. */
export const LOOPBACK_ACCESS: ConsoleAccess = { scheme: 'http', names: [], loopback: true, publicOrigin: null };

const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** Whether a bind address stays on this computer: 127.0.0.0/8, ::1 or the name localhost. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  if (isIPv6(bare)) return hostnameOf(`[${bare}]`) === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(hostnameOf(`[${bare}]`) ?? '');
  return false;
}

/** The wildcard addresses: every interface, so no single name to print. */
export function isWildcardAddress(address: string): boolean {
  return ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0'].includes(address);
}

/** A Host header's (or an address's) hostname as URL spells it, or null when it is not one. */
export function hostnameOf(host: string): string | null {
  if (host === '' || /[/?#@\s\\]/.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** An address as it goes in a URL: IPv6 in brackets. */
export function urlHost(address: string): string {
  return isIPv6(address) ? `[${address}]` : address;
}

function nameMatches(pattern: string, hostname: string): boolean {
  if (pattern === hostname) return true;
  if (!pattern.startsWith('*.')) return false;
  const dot = hostname.indexOf('.');
  return dot > 0 && hostname.slice(dot + 1) === pattern.slice(2);
}

/** Whether the listener itself answers to a Host (a loopback name, a certificate's name), not only its proxy. */
function ownHost(access: ConsoleAccess, host: string, hostname: string | null): boolean {
  if (access.loopback && LOOPBACK_HOST.test(host)) return true;
  return hostname !== null && access.names.some((n) => nameMatches(n, hostname));
}

/** Whether a request's Host header names this console: refused otherwise (DNS rebinding). */
export function acceptsHost(access: ConsoleAccess, host: string): boolean {
  const hostname = hostnameOf(host);
  if (ownHost(access, host, hostname)) return true;
  return hostname !== null && access.publicOrigin !== null && new URL(access.publicOrigin).hostname === hostname;
}

/**
 * Whether a browser's `Origin` is this console's own page: the proxy's public origin, or the
 * listener's scheme with a Host the listener itself answers to. Behind a proxy, http:// on the
 * public name is another origin, refused.
 */
export function acceptsOrigin(access: ConsoleAccess, origin: string, host: string): boolean {
  let given: string;
  try {
    given = new URL(origin).origin;
  } catch {
    return false;
  }
  if (given === 'null') return false;
  if (given === access.publicOrigin) return true;
  if (!ownHost(access, host, hostnameOf(host))) return false;
  try {
    return given === new URL(`${access.scheme}://${host}`).origin;
  } catch {
    return false;
  }
}

/** What a refused Host is told it should have been. */
export function describeAccess(access: ConsoleAccess): string {
  const names = [...(access.loopback ? ['a loopback name'] : []), ...access.names, ...(access.publicOrigin ? [new URL(access.publicOrigin).host] : [])];
  return names.length === 1 && access.loopback ? 'console answers only to a loopback Host name' : `console answers only to the Host names ${names.join(', ')}`;
}
