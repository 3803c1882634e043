/**
 * Text-level checks of a send_url. The delivery worker checks the resolved address again at
 * connect time, because a harmless-looking name can resolve to a forbidden address.
 *
 * Only link-local and cloud metadata addresses are forbidden (docs/protocol.md section 8): loopback and
 * private ranges stay allowed, since local receivers and tests live there.
 */

const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

type Octets = readonly [number, number, number, number];

/** Strict dotted quad, as the URL parser and the resolver print an IPv4 address. */
function ipv4Octets(host: string): Octets | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? (octets as unknown as Octets) : null;
}

function isForbiddenIpv4([a, b, c, d]: Octets): boolean {
  if (a === 169 && b === 254) return true; // link-local, incl. 169.254.169.254 (AWS, GCP, Azure metadata)
  if (a === 100 && b === 100 && c === 100 && d === 200) return true; // Alibaba Cloud metadata
  if (a === 192 && b === 0 && c === 0 && d === 192) return true; // Oracle Cloud metadata
  return false;
}

/** The 8 hextets of an IPv6 address (brackets and zone id already removed), or null. */
function ipv6Hextets(text: string): number[] | null {
  let s = text;
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4Octets(tail);
    if (!v4 || lastColon < 0) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => (/^[0-9a-f]{1,4}$/i.test(h) ? parseInt(h, 16) : NaN)));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if ([...head, ...rest].some(Number.isNaN)) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  if (head.length + rest.length > 7) return null;
  return [...head, ...Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

/**
 * The IPv4 address an IPv6 address carries, where reaching the IPv6 one reaches the IPv4 one:
 * IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d and the
 * NAT64 prefixes 64:ff9b::/96 and 64:ff9b:1::/48 (RFC 8215, at its /96 layout).
 */
function embeddedIpv4(h: readonly number[]): Octets | null {
  const zero = (from: number, to: number): boolean => h.slice(from, to).every((x) => x === 0);
  const carries =
    (zero(0, 5) && h[5] === 0xffff) ||
    zero(0, 6) ||
    (zero(0, 4) && h[4] === 0xffff && h[5] === 0) ||
    (h[0] === 0x64 && h[1] === 0xff9b && zero(2, 6)) ||
    (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 1 && zero(3, 6));
  if (!carries) return null;
  return [h[6]! >> 8, h[6]! & 0xff, h[7]! >> 8, h[7]! & 0xff];
}

function isForbiddenIpv6(h: readonly number[]): boolean {
  if ((h[0]! & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if (h.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return true; // AWS metadata over IPv6
  const v4 = embeddedIpv4(h);
  return v4 !== null && isForbiddenIpv4(v4);
}

/** How the URL parser reads a host: decimal, hex, octal and short IPv4 forms become dotted quads. */
function asUrlHost(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}

function isForbiddenHost(host: string): boolean {
  const name = host.replace(/\.+$/, '');
  const v4 = ipv4Octets(name);
  if (v4) return isForbiddenIpv4(v4);
  return METADATA_HOSTS.has(name);
}

/**
 * True for link-local and cloud metadata addresses, which are never a delivery target. Takes a
 * URL's hostname (`[::ffff:a9fe:a9fe]`), an address as the resolver or a socket reports it
 * (`fe80::1%eth0`, `::ffff:169.254.169.254`) or a raw spelling (`2852039166`, `0xa9fea9fe`).
 * Where a spelling could be read two ways (`0251.254.0.1`: decimal or octal), both readings count.
 * Something shaped like IPv6 that does not parse is refused: no resolver or URL produces one.
 */
export function isForbiddenAddress(address: string): boolean {
  let host = address.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.includes(':')) {
    const zone = host.indexOf('%');
    const hextets = ipv6Hextets(zone >= 0 ? host.slice(0, zone) : host);
    return hextets === null || isForbiddenIpv6(hextets);
  }
  if (isForbiddenHost(host)) return true;
  const parsed = asUrlHost(host);
  return parsed !== null && parsed !== host && isForbiddenAddress(parsed);
}

export type SendUrlCheck = { ok: true; url: URL } | { ok: false; code: 'validation_failed' | 'send_url_not_allowed'; message: string };

export function checkSendUrl(raw: string, allowedOrigins: readonly string[] | undefined): SendUrlCheck {
  if (!URL.canParse(raw)) return { ok: false, code: 'validation_failed', message: 'must be an absolute http or https URL' };
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, code: 'validation_failed', message: 'must be an absolute http or https URL' };
  }
  if (url.username || url.password) {
    return { ok: false, code: 'validation_failed', message: 'must not contain credentials' };
  }
  if (isForbiddenAddress(url.hostname)) {
    return { ok: false, code: 'send_url_not_allowed', message: 'must not point at a link-local or cloud metadata address' };
  }
  if (allowedOrigins && allowedOrigins.length > 0 && !allowedOrigins.includes(url.origin)) {
    return {
      ok: false,
      code: 'send_url_not_allowed',
      message: `must have one of the client's allowed origins (${allowedOrigins.join(', ')}), not ${url.origin}`,
    };
  }
  return { ok: true, url };
}
