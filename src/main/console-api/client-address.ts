import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** An address as Node reports it, IPv4-mapped IPv6 unwrapped, so `::ffff:127.0.0.1` matches `127.0.0.1`. */
function plain(address: string): string {
  // Some proxies forward `1.2.3.4:5678` or `[2001:db8::1]:5678`: the port is not part of who it is.
  const bare = address
    .trim()
    .replace(/^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/, '$1')
    .replace(/^\[(.*)\](?::\d+)?$/, '$1');
  return bare.toLowerCase().startsWith('::ffff:') && isIP(bare.slice(7)) === 4 ? bare.slice(7) : bare.toLowerCase();
}

/**
 * Who is calling: the socket's peer, unless that peer is a trusted proxy (a TLS proxy in front of a
 * team server, `--public-origin`), in which case the address it forwarded in X-Forwarded-For. The
 * header is read from the right, skipping trusted proxies, so a client cannot pick its own address
 * by sending the header itself: only what the trusted hops appended counts. Sign-in throttling and
 * the audit use this address; behind a proxy without it, every agent would share the proxy's.
 */
export function clientAddress(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string | null {
  const peer = req.socket.remoteAddress;
  if (!peer) return null;
  if (!trustedProxies.has(plain(peer))) return plain(peer);
  const forwarded = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').map(plain).filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) break;
    if (!trustedProxies.has(hop)) return hop;
  }
  return plain(peer);
}

/** The proxies whose X-Forwarded-For is believed: those configured, else loopback when a public origin says a proxy is in front. */
export function trustedProxiesOf(config: { trustedProxies?: readonly string[] | undefined; publicOrigin?: string | undefined }): ReadonlySet<string> {
  if (config.trustedProxies) return new Set(config.trustedProxies.map(plain));
  return new Set(config.publicOrigin ? ['127.0.0.1', '::1'] : []);
}
